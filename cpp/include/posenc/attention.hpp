// posenc: attention with the semantics of the ONNX operators Attention-23/24 and
// RotaryEmbedding-23, and an attention call with fused positional terms (ALiBi, T5, RoPE).
// float32 in and out, float32 accumulation; softmax stays finite at ±1e4 logits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "posenc/rope.hpp"
#include "posenc/status.hpp"
#include "posenc/t5.hpp"

namespace posenc {

enum class DType : int { kFloat32 = 0, kBool = 1, kInt64 = 2, kFloat16 = 3 };  // kFloat16: IEEE half bits (uint16)

// A read-only view of a row-major tensor of rank <= 4. data == nullptr means "absent" (an omitted
// optional ONNX input). bool tensors are one byte per element (0 = false).
struct TensorRef {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  int rank = 0;
  std::int64_t dims[4] = {0, 0, 0, 0};

  bool present() const noexcept { return data != nullptr; }
  std::int64_t size() const noexcept;  // product of dims (1 for rank 0)
};

// ---- ONNX RotaryEmbedding-23 ----------------------------------------------------------------------

struct RotaryEmbeddingAttrs {
  int interleaved = 0;                  // 1: pairs (2k, 2k+1); 0: (k, k + rd/2)
  std::int64_t rotary_embedding_dim = 0;  // 0: head_size
  std::int64_t num_heads = 0;           // required for 3D input
};

// X [B, H, S, D] or [B, S, H*D]; cos/sin caches [max_pos, rd/2] with position_ids [B, S] (int64),
// or [B, S, rd/2] without. Writes y (X's shape). Dims >= rd are copied through.
// Status: kBadShape / kBadArgument naming the slot or attribute that is wrong.
// The checks of onnx_rotary_embedding alone (shapes, attributes, position ids in range): lets a
// caller validate a whole tensor once, then rotate it in pieces.
Status onnx_rotary_embedding_check(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs) noexcept;
Status onnx_rotary_embedding(const TensorRef& x, const TensorRef& cos_cache,
                             const TensorRef& sin_cache, const TensorRef& position_ids,
                             const RotaryEmbeddingAttrs& attrs, float* y) noexcept;
// The same on float16 X and caches (y: float16 bits): widened to float32 exactly, rotated in
// float32, rounded back to nearest (ties to even).
Status onnx_rotary_embedding_f16(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                 const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs,
                                 std::uint16_t* y) noexcept;

// ---- ONNX Attention-23/24 -------------------------------------------------------------------------

struct AttentionAttrs {
  int is_causal = 0;
  std::optional<double> scale;      // default 1/sqrt(head_size)
  std::int64_t q_num_heads = 0;     // required for 3D input
  std::int64_t kv_num_heads = 0;
  double softcap = 0.0;             // <= 0: off
  int qk_matmul_output_mode = 0;    // 0 raw, 1 softcapped, 2 + bias (mask, causal), 3 softmax
  int softmax_precision = 0;        // 0 (unset) or 1 (FLOAT); others are refused: float32 only
  int opset = 24;                   // 23 refuses nonpad_kv_seqlen
};

struct AttentionInputs {
  TensorRef q, k, v;                            // float32 (or all float16), 3D or 4D (all the same rank)
  TensorRef attn_mask;                          // float32, float16 or bool; broadcasts to [B, Hq, Sq, T]
  TensorRef past_key, past_value;               // Q's type, [B, Hkv, P, D] / [B, Hkv, P, Dv]
  TensorRef nonpad_kv_seqlen;                   // int64 [B], opset 24
  // Q may be a piece of the queries: their rows [q_row0, q_row0 + Q's q_len) out of q_len_total
  // (0: Q is all of them). The mask's broadcast, its rows and the causal limits are then those of
  // the whole sequence of queries; Y and qk_matmul_output are the piece's rows. Pieces that start
  // at a multiple of 64 rows and hold a multiple of 64 (or run to the end) give exactly the rows of
  // one call on all of Q (the kernels' 64-row query blocks); other pieces differ by rounding only.
  std::int64_t q_row0 = 0;
  std::int64_t q_len_total = 0;
};

// Shapes of the outputs an ONNX Attention node with these inputs produces.
struct AttentionShapes {
  int y_rank = 4;
  std::int64_t y[4] = {0, 0, 0, 0};             // [B, Hq, Sq, Dv] or [B, Sq, Hq*Dv]
  std::int64_t present_key[4] = {0, 0, 0, 0};   // [B, Hkv, T, D]
  std::int64_t present_value[4] = {0, 0, 0, 0}; // [B, Hkv, T, Dv]
  std::int64_t qk_matmul_output[4] = {0, 0, 0, 0};  // [B, Hq, Sq, T]
};

// Checks every input and attribute and reports the output shapes. Status names the slot or
// attribute: "attn_mask does not broadcast to [B, q_num_heads, q_len, total kv length]", ...
Status onnx_attention_shapes(const AttentionInputs& in, const AttentionAttrs& attrs,
                             AttentionShapes* shapes) noexcept;

// Runs the node. Each output pointer may be null (not requested); y must not be. Memory beyond
// the outputs is O(T·(D + Dv)) per thread (set_num_threads): scores are streamed over key blocks
// (online softmax) unless qk_matmul_output is requested, and causal rows skip the keys they
// cannot see.
Status onnx_attention(const AttentionInputs& in, const AttentionAttrs& attrs, float* y,
                      float* present_key, float* present_value, float* qk_matmul_output) noexcept;

// The same on float16 Q, K, V (and past; any mask): widened to float32 exactly,
// computed in float32, and every output rounded to float16 (to nearest, ties to even), the type
// ONNX gives the outputs. onnx_attention itself refuses float16 inputs.
Status onnx_attention_f16(const AttentionInputs& in, const AttentionAttrs& attrs, std::uint16_t* y,
                          std::uint16_t* present_key, std::uint16_t* present_value,
                          std::uint16_t* qk_matmul_output) noexcept;

// ---- attention with fused positional terms ----------------------------------------------------------

struct AttentionOptions {
  std::size_t n_heads = 0;       // query heads
  std::size_t n_kv_heads = 0;    // 0: n_heads. Must divide n_heads (GQA/MQA).
  std::size_t head_dim = 0;
  bool causal = false;           // key j visible to query i iff j <= qpos_i
  std::optional<double> scale;   // default 1/sqrt(head_dim)
  double softcap = 0.0;
  const float* alibi_slopes = nullptr;   // [n_heads]: bias -slope_h * |qpos_i - j|
  const float* t5_table = nullptr;       // [num_buckets][n_heads]: bias table[bucket(j - qpos_i)][h]
  T5BucketParams t5;
  const double* rope_inv_freq = nullptr; // [rope_rot_dim/2]: RoPE applied to q and k inside the call
  std::size_t rope_rot_dim = 0;
  RopeApplyOptions rope;
  const float* bias = nullptr;           // additive [n_heads][q_len][kv_len], or [q_len][kv_len]
  bool bias_per_head = false;
  // Sliding window (HF's sliding_window: Mistral, Gemma 2/3 local layers, gpt-oss): key j visible
  // to query i iff qpos_i - window < j — the window counts the query's own key; without causal
  // also j < qpos_i + window. Blocks of keys wholly outside are skipped. Must be > 0.
  std::optional<std::size_t> window;
  std::size_t sink_tokens = 0;           // StreamingLLM: keys 0 … sink_tokens-1 stay visible (needs window)
  const float* sinks = nullptr;          // [n_heads]: gpt-oss's learned sink logit, one more logit in
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
double irope_attention_scale(double pos, double floor_scale, double attn_scale) noexcept;

// q [q_len][n_heads][head_dim], k and v [kv_len][n_kv_heads][head_dim] (one sequence, tokens
// major, as applyRope takes them); out [q_len][n_heads][head_dim]. Queries sit at the last q_len
// key positions: qpos_i = kv_len - q_len + i, or options.q_pos + i (RoPE positions too; keys at
// 0 … kv_len-1).
// weights (optional) [n_heads][q_len][kv_len] receives the softmax probabilities.
// k and v are float32, or float16 bits (uint16) with options.kv_dtype = DType::kFloat16 — as
// llama.cpp keeps its KV cache; they are widened to float32 one kv head at a time (per thread).
Status attention(const float* q, const void* k, const void* v, std::size_t q_len,
                 std::size_t kv_len, const AttentionOptions& options, float* out,
                 float* weights = nullptr) noexcept;

}  // namespace posenc
