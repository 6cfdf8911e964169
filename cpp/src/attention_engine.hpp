// Internal: the attention engine that ONNX Attention (onnx.cpp) and the fused attention call
// (attention.cpp) share — a Problem (tensors read in place through element strides, the bias
// terms, masks, window and sinks of every row) and run(), which splits it over (batch, head,
// 64-row query block) tasks on the thread pool. Callers check every shape and argument first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "posenc/attention.hpp"
#include "refusals.hpp"

namespace posenc::engine {

inline Status shape(const char* message) { return {StatusCode::kBadShape, message}; }

// Element strides of a [batch][heads][seq][dim] tensor stored token-major ([B][S][H][d], ONNX 3D
// and the fused API) or head-major ([B][H][S][d], ONNX 4D); dim is contiguous either way.
struct Strides {
  std::size_t b = 0, h = 0, s = 0;
};
inline Strides strides(bool token_major, std::size_t heads, std::size_t seq, std::size_t dim) {
  return token_major ? Strides{seq * heads * dim, dim, heads * dim} : Strides{heads * seq * dim, seq * dim, dim};
}

// Everything one attention computation needs, with element strides so that 3D (token-major)
// and 4D (head-major) tensors are read in place. The positional bias terms (alibi_slopes,
// t5_table, t5) are the caller's PositionBias, copied as a whole.
struct Problem : PositionBias {
  std::size_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 1, v_dim = 1;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const std::uint16_t* k16 = nullptr;  // float16 K and V instead (k, v unused), widened per kv head
  const std::uint16_t* v16 = nullptr;
  float* y = nullptr;
  Strides qs, ks, vs, ys;
  float scale = 1.0f;
  float softcap = 0.0f;
  // Bias terms. The mask is read at b*m_sb + h*m_sh + i*m_ss + j for j < mask_len.
  const float* mask_f = nullptr;
  const std::uint8_t* mask_b = nullptr;
  std::size_t m_sb = 0, m_sh = 0, m_ss = 0, mask_len = 0;
  bool causal = false;
  std::vector<std::int64_t> causal_offset;  // per batch: key j visible iff j <= i + offset
  const std::int64_t* nonpad = nullptr;     // per batch: keys j >= nonpad[b] are masked
  std::int64_t qpos0 = 0;                   // query i sits at position qpos0 + i (ALiBi, T5)
  const float* bias = nullptr;              // + bias[h * bias_sh + i * kv_len + j]
  std::size_t bias_sh = 0;
  float* qk = nullptr;  // [B][Hq][Sq][T] in mode qk_mode
  int qk_mode = 0;
  std::size_t window = 0;        // sliding window: key j visible iff qpos - window < j (0: none)
  std::size_t sink_tokens = 0;   // with window: keys 0 … sink_tokens-1 stay visible
  std::size_t chunk = 0;         // chunked attention: key j visible iff j / chunk == qpos / chunk
  const float* sinks = nullptr;  // [q_heads]: a learned logit in every softmax row, no value
};

// Runs p: each output row is computed by one task with the same operations on any thread count.
// kTooLarge when the per-worker scratch does not fit in memory.
Status run(const Problem& p);

// The product of dims as a count of elements that fits in memory addresses (with room to spare),
// or -1 on overflow.
std::int64_t checked_product(std::initializer_list<std::int64_t> dims);

}  // namespace posenc::engine
