// posenc: attention with fused positional terms (ALiBi, T5, RoPE, masks, sliding windows, sinks,
// Llama 4's chunks and temperature), float32 in and out, float32 accumulation; softmax stays
// finite at ±1e4 logits. The ONNX operators are in posenc/onnx.hpp (included here: DType).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "posenc/onnx.hpp"
#include "posenc/rope.hpp"
#include "posenc/status.hpp"
#include "posenc/t5.hpp"

namespace posenc {

// ---- attention with fused positional terms ----------------------------------------------------------

// The positional bias terms added to every score, by attention() and KvCache::attend alike; the
// attention engine holds them as given (engine::Problem derives from this too). A new bias term is
// its field here, and its rule and term in cpp/src/position_bias.hpp.
struct PositionBias {
  const float* alibi_slopes = nullptr;  // [n_heads]: bias -slope_h * |qpos_i - j|
  const float* t5_table = nullptr;      // [num_buckets][n_heads]: bias table[bucket(j - qpos_i)][h]
  T5BucketParams t5;
};

struct AttentionOptions : PositionBias {  // alibi_slopes, t5_table, t5
  std::size_t n_heads = 0;                // query heads
  std::size_t n_kv_heads = 0;             // 0: n_heads. Must divide n_heads (GQA/MQA).
  std::size_t head_dim = 0;
  bool causal = false;          // key j visible to query i iff j <= qpos_i
  std::optional<double> scale;  // default 1/sqrt(head_dim)
  double softcap = 0.0;
  const double* rope_inv_freq = nullptr;  // [rope_rot_dim/2]: RoPE applied to q and k inside the call
  std::size_t rope_rot_dim = 0;
  RopeApplyOptions rope;
  const float* bias = nullptr;  // additive [n_heads][q_len][kv_len], or [q_len][kv_len]
  bool bias_per_head = false;
  // Sliding window (HF's sliding_window: Mistral, Gemma 2/3 local layers, gpt-oss): key j visible
  // to query i iff qpos_i - window < j — the window counts the query's own key; without causal
  // also j < qpos_i + window. Blocks of keys wholly outside are skipped. Must be > 0.
  std::optional<std::size_t> window;
  std::size_t sink_tokens = 0;   // StreamingLLM: keys 0 … sink_tokens-1 stay visible (needs window)
  const float* sinks = nullptr;  // [n_heads]: gpt-oss's learned sink logit, one more logit in
                                 // every softmax row that carries no value (rows sum to < 1)
  // Llama 4's chunked local attention (attention_chunk_size, its RoPE layers): key j visible iff
  // j / chunk_size == qpos_i / chunk_size (integer division), combined with causal. Must be > 0.
  std::optional<std::size_t> chunk_size;
  // Llama 4's attention temperature (its NoPE layers, attn_temperature_tuning): query i is
  // multiplied by irope_attention_scale(qpos_i, floor_scale, attn_scale) before the scores.
  struct Temperature {
    double floor_scale = 8192.0;
    double attn_scale = 0.1;
  };
  std::optional<Temperature> temperature;
  // Heads-major tensors (the ONNX 4-D layout, one batch): q and out [n_heads][q_len][head_dim],
  // k and v [n_kv_heads][kv_len][head_dim]; read in place, no transposes. Default: tokens major.
  bool heads_major = false;
  DType kv_dtype = DType::kFloat32;  // kFloat16: k and v hold float16 bits
  // The position of query 0 (query i sits at q_pos + i: causal limit, window, chunks, ALiBi, T5,
  // RoPE, temperature). Default kv_len - q_len: the queries are the last q_len tokens. Given, it
  // lets a caller run the rows of a long q in pieces: pieces of whole 64-row blocks, as in
  // AttentionInputs::q_row0, give exactly the result of one call. |q_pos| <= 2^53.
  std::optional<std::int64_t> q_pos;
};

// HF Llama4TextAttention: log(floor((pos + 1) / floor_scale) + 1) * attn_scale + 1 (1 up to
// pos = floor_scale - 2, then growing with the log of the position).
// Precondition: irope_check(floor_scale, attn_scale).ok().
double irope_attention_scale(double pos, double floor_scale, double attn_scale) noexcept;
// The temperature's rule (attention_check's for options.temperature; the binding of
// irope_attention_scale and the JS layer ask it first): kBadArgument unless floor_scale is finite
// and > 0 and attn_scale finite.
Status irope_check(double floor_scale, double attn_scale) noexcept;

// q [q_len][n_heads][head_dim], k and v [kv_len][n_kv_heads][head_dim] (one sequence, tokens
// major, as applyRope takes them); out [q_len][n_heads][head_dim]. Queries sit at the last q_len
// key positions: qpos_i = kv_len - q_len + i, or options.q_pos + i (RoPE positions too; keys at
// 0 … kv_len-1).
// weights (optional) [n_heads][q_len][kv_len] receives the softmax probabilities.
// k and v are float32, or float16 bits (uint16) with options.kv_dtype = DType::kFloat16 — as
// llama.cpp keeps its KV cache; they are widened to float32 one kv head at a time (per thread).
// Status: kBadArgument naming the argument and its rule (attention_check's, then null tensors);
// kTooLarge when the tensors' extents pass memory.
Status attention(const float* q, const void* k, const void* v, std::size_t q_len, std::size_t kv_len,
                 const AttentionOptions& options, float* out, float* weights = nullptr) noexcept;

// attention()'s argument rules that need no tensor — every one but the null tensors, in the order
// attention() gives their messages: the extents and heads, scale, softcap, the bias terms (the
// values alibi_slopes and sinks point at, when given), window, sinks, chunks, temperature, q_pos,
// and kTooLarge for extents past memory (with_weights: the weights' too). attention() runs it
// first; a caller can run it before it allocates the tensors (the JS layer does).
Status attention_check(std::size_t q_len, std::size_t kv_len, const AttentionOptions& options,
                       bool with_weights = false) noexcept;

}  // namespace posenc
