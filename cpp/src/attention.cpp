// Attention with fused positional terms (posenc/attention.hpp): RoPE on copies of q and k, ALiBi,
// T5, masks, sliding windows, sinks, Llama 4's chunks and temperature, checked here and computed
// by the attention engine (attention_engine.cpp).
#include "posenc/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "attention_engine.hpp"
#include "kernels/kernels.hpp"
#include "position_bias.hpp"

namespace posenc {

using engine::checked_product;
using engine::Problem;
using engine::strides;

// ---- attention with fused positional terms ------------------------------------------------------

Status irope_check(double floor_scale, double attn_scale) noexcept {
  if (!(std::isfinite(floor_scale) && floor_scale > 0 && std::isfinite(attn_scale)))
    return bad("temperature floor_scale must be finite and > 0, attn_scale finite");
  return Status::Ok();
}

Status attention_check(std::size_t q_len, std::size_t kv_len, const AttentionOptions& o, bool with_weights) noexcept {
  if (o.kv_dtype != DType::kFloat32 && o.kv_dtype != DType::kFloat16) return bad("kv_dtype must be float32 or float16");
  if (q_len == 0) return bad("q_len must be > 0");
  if (kv_len == 0) return bad("kv_len must be > 0");
  if (o.n_heads == 0) return bad("n_heads must be > 0");
  if (o.head_dim == 0) return bad("head_dim must be > 0");
  const std::size_t n_kv = o.n_kv_heads == 0 ? o.n_heads : o.n_kv_heads;
  if (o.n_heads % n_kv != 0) return bad("n_heads must be a multiple of n_kv_heads");
  if (o.scale && !std::isfinite(*o.scale)) return bad("scale must be finite");
  if (!std::isfinite(o.softcap)) return bad("softcap must be finite");
  if (Status s = position_bias::check(o, o.n_heads); !s.ok()) return s;
  if (o.window && *o.window == 0) return bad("window must be > 0 (it counts the query's own key)");
  if (o.sink_tokens != 0 && !o.window) return bad("sink_tokens needs a window");
  if (o.chunk_size && *o.chunk_size == 0) return bad("chunk_size must be > 0");
  if (o.chunk_size && o.sink_tokens != 0) return bad("sink_tokens works with a window, not with chunk_size");
  if (o.temperature)
    if (Status s = irope_check(o.temperature->floor_scale, o.temperature->attn_scale); !s.ok()) return s;
  if (o.sinks)
    for (std::size_t h = 0; h < o.n_heads; ++h)
      if (!std::isfinite(o.sinks[h])) return bad("sinks must be finite");
  constexpr std::int64_t kMaxPos = std::int64_t{1} << 53;
  if (o.q_pos && (*o.q_pos < -kMaxPos || *o.q_pos > kMaxPos)) return bad("q_pos must be in [-2^53, 2^53]");
  const auto i64 = [](std::size_t n) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(n, std::numeric_limits<std::int64_t>::max()));
  };
  for (const std::int64_t n : {checked_product({i64(q_len), i64(o.n_heads), i64(o.head_dim)}),
                               checked_product({i64(kv_len), i64(n_kv), i64(o.head_dim)}),
                               with_weights ? checked_product({i64(o.n_heads), i64(q_len), i64(kv_len)}) : 0})
    if (n < 0) return {StatusCode::kTooLarge, "attention tensors too large for memory"};
  return Status::Ok();
}

namespace {

// The engine's problem for attention's arguments (already checked): one batch, the tensors read
// in place, the bias terms, masks, window, chunks and sinks.
Problem problem(const float* q, const void* k_data, const void* v_data, std::size_t q_len, std::size_t kv_len,
                const AttentionOptions& o, float* out, float* weights) {
  const bool half_kv = o.kv_dtype == DType::kFloat16;
  const std::size_t n_kv = o.n_kv_heads == 0 ? o.n_heads : o.n_kv_heads;
  Problem p;
  p.batch = 1;
  p.q_heads = o.n_heads;
  p.kv_heads = n_kv;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = o.head_dim;
  p.v_dim = o.head_dim;
  p.q = q;
  p.k = half_kv ? nullptr : static_cast<const float*>(k_data);
  p.v = half_kv ? nullptr : static_cast<const float*>(v_data);
  if (half_kv) {
    p.k16 = static_cast<const std::uint16_t*>(k_data);
    p.v16 = static_cast<const std::uint16_t*>(v_data);
  }
  p.y = out;
  p.qs = p.ys = strides(!o.heads_major, o.n_heads, q_len, o.head_dim);
  p.ks = p.vs = strides(!o.heads_major, n_kv, kv_len, o.head_dim);
  p.scale = static_cast<float>(o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(o.head_dim)));
  p.softcap = o.softcap > 0.0 ? static_cast<float>(o.softcap) : 0.0f;
  p.qpos0 = o.q_pos.value_or(static_cast<std::int64_t>(kv_len) - static_cast<std::int64_t>(q_len));
  p.causal = o.causal;
  p.causal_offset.assign(1, p.qpos0);
  static_cast<PositionBias&>(p) = o;
  p.bias = o.bias;
  p.bias_sh = o.bias_per_head ? q_len * kv_len : 0;
  p.qk = weights;
  p.qk_mode = 3;
  p.window = o.window.value_or(0);
  p.chunk = o.chunk_size.value_or(0);
  p.sink_tokens = o.sink_tokens;
  p.sinks = o.sinks;
  return p;
}

// RoPE on copies of q and k (float32 keys, widened from float16 if need be): queries at qpos0 + i,
// keys at j. p then reads the copies.
Status rotate_copies(const AttentionOptions& o, std::size_t q_len, std::size_t kv_len, Problem* p,
                     std::vector<float>* q_rot, std::vector<float>* k_rot) {
  const std::size_t n_kv = p->kv_heads;
  try {
    q_rot->assign(p->q, p->q + q_len * o.n_heads * o.head_dim);
    if (p->k16 != nullptr) {  // the rotated keys are float32 (V stays float16)
      k_rot->resize(kv_len * n_kv * o.head_dim);
      kernels::widen_half(k_rot->data(), p->k16, k_rot->size());
    } else {
      k_rot->assign(p->k, p->k + kv_len * n_kv * o.head_dim);
    }
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "q and k too large for memory"};
  }
  // Heads major: each head's [len][head_dim] slab is a one-head token-major tensor.
  auto rotate = [&](float* x, std::size_t len, std::size_t heads, double offset) {
    if (!o.heads_major)
      return apply_rope(x, len, heads, o.head_dim, o.rope_inv_freq, o.rope_rot_dim, nullptr, offset, o.rope);
    for (std::size_t h = 0; h < heads; ++h)
      if (Status s = apply_rope(x + h * len * o.head_dim, len, 1, o.head_dim, o.rope_inv_freq, o.rope_rot_dim, nullptr,
                                offset, o.rope);
          !s.ok())
        return s;
    return Status::Ok();
  };
  if (Status s = rotate(q_rot->data(), q_len, o.n_heads, static_cast<double>(p->qpos0)); !s.ok()) return s;
  if (Status s = rotate(k_rot->data(), kv_len, n_kv, 0.0); !s.ok()) return s;
  p->q = q_rot->data();
  p->k = k_rot->data();
  p->k16 = nullptr;
  return Status::Ok();
}

// Llama 4's NoPE layers: each query row times its position's scale, on a copy of q (the rotated
// one if RoPE made it). p then reads the copy.
Status scale_by_temperature(const AttentionOptions& o, const float* q, std::size_t q_len, Problem* p,
                            std::vector<float>* q_rot) {
  try {
    if (q_rot->empty()) q_rot->assign(q, q + q_len * o.n_heads * o.head_dim);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "q too large for memory"};
  }
  for (std::size_t i = 0; i < q_len; ++i) {
    const auto scale = static_cast<float>(irope_attention_scale(static_cast<double>(p->qpos0) + static_cast<double>(i),
                                                                o.temperature->floor_scale, o.temperature->attn_scale));
    for (std::size_t h = 0; h < o.n_heads; ++h) {
      float* row = q_rot->data() + (o.heads_major ? (h * q_len + i) : (i * o.n_heads + h)) * o.head_dim;
      for (std::size_t e = 0; e < o.head_dim; ++e) row[e] *= scale;
    }
  }
  p->q = q_rot->data();
  return Status::Ok();
}

}  // namespace

Status attention(const float* q, const void* k_data, const void* v_data, std::size_t q_len, std::size_t kv_len,
                 const AttentionOptions& o, float* out, float* weights) noexcept {
  if (Status s = attention_check(q_len, kv_len, o, weights != nullptr); !s.ok()) return s;
  if (q == nullptr || k_data == nullptr || v_data == nullptr || out == nullptr)
    return bad("q, k, v and out must not be null");
  Problem p = problem(q, k_data, v_data, q_len, kv_len, o, out, weights);
  std::vector<float> q_rot, k_rot;
  if (o.rope_inv_freq)
    if (Status s = rotate_copies(o, q_len, kv_len, &p, &q_rot, &k_rot); !s.ok()) return s;
  if (o.temperature)
    if (Status s = scale_by_temperature(o, q, q_len, &p, &q_rot); !s.ok()) return s;
  return engine::run(p);
}

double irope_attention_scale(double pos, double floor_scale, double attn_scale) noexcept {
  return std::log(std::floor((pos + 1.0) / floor_scale) + 1.0) * attn_scale + 1.0;
}

}  // namespace posenc
