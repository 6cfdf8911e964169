// ONNX Attention-23/24 and RotaryEmbedding-23 with their exact semantics (posenc/onnx.hpp): the
// shapes, attributes, masks, past and presents are checked and laid out here, the computation is
// the attention engine's (attention_engine.cpp). The semantics, case by case, are those of
// onnx/reference/ops/op_attention.py and op_rotary_embedding.py as summarized in
// shared/conformance/README.md. Their float16 forms: onnx_float16.cpp.
#include "posenc/onnx.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "attention_engine.hpp"
#include "kernels/kernels.hpp"
#include "thread_pool.hpp"

namespace posenc {
namespace {

using engine::checked_product;
using engine::Problem;
using engine::shape;
using engine::Strides;
using engine::strides;

// ---- ONNX Attention: shapes -------------------------------------------------------------------

struct Dims {
  std::int64_t B, Hq, Hkv, Sq, Skv, P, T, D, Dv;
  std::int64_t q_row0, Sq_all;  // Q holds rows [q_row0, q_row0 + Sq) of Sq_all queries
  bool three_d;
};

// Q, K and V: their element type, rank, batch, heads, lengths and head sizes; Q's rows.
Status qkv_dims(const AttentionInputs& in, const AttentionAttrs& a, Dims* out) {
  if (!in.q.present() || !in.k.present() || !in.v.present()) return bad("Q, K and V are required");
  if (in.q.dtype != DType::kFloat32 && in.q.dtype != DType::kFloat16)
    return bad("Q, K and V must be float32 or float16");
  for (const TensorRef* t : {&in.k, &in.v})
    if (t->dtype != in.q.dtype) return bad("Q, K and V must have one element type");
  if (in.q.rank != in.k.rank || in.q.rank != in.v.rank || (in.q.rank != 3 && in.q.rank != 4))
    return shape("Q, K and V must all be 3D or all 4D");
  for (const TensorRef* t : {&in.q, &in.k, &in.v})
    for (int d = 0; d < t->rank; ++d)
      if (t->dims[d] < 1) return shape("Q, K and V dimensions must be >= 1");
  Dims& d = *out;
  d.three_d = in.q.rank == 3;
  d.B = in.q.dims[0];
  if (in.k.dims[0] != d.B || in.v.dims[0] != d.B) return shape("Q, K and V must have the same batch size");
  if (d.three_d) {
    if (a.q_num_heads <= 0 || a.kv_num_heads <= 0)
      return bad("q_num_heads and kv_num_heads are required for 3D Q, K and V");
    d.Hq = a.q_num_heads;
    d.Hkv = a.kv_num_heads;
    if (in.q.dims[2] % d.Hq != 0) return shape("Q's last dimension must be a multiple of q_num_heads");
    if (in.k.dims[2] % d.Hkv != 0) return shape("K's last dimension must be a multiple of kv_num_heads");
    if (in.v.dims[2] % d.Hkv != 0) return shape("V's last dimension must be a multiple of kv_num_heads");
    d.Sq = in.q.dims[1];
    d.Skv = in.k.dims[1];
    if (in.v.dims[1] != d.Skv) return shape("K and V must have the same sequence length");
    d.D = in.q.dims[2] / d.Hq;
    if (in.k.dims[2] / d.Hkv != d.D) return shape("K's head size (last dimension / kv_num_heads) must equal Q's");
    d.Dv = in.v.dims[2] / d.Hkv;
  } else {
    d.Hq = in.q.dims[1];
    d.Hkv = in.k.dims[1];
    if (in.v.dims[1] != d.Hkv) return shape("K and V must have the same number of heads");
    d.Sq = in.q.dims[2];
    d.Skv = in.k.dims[2];
    if (in.v.dims[2] != d.Skv) return shape("K and V must have the same sequence length");
    d.D = in.q.dims[3];
    if (in.k.dims[3] != d.D) return shape("K's head size must equal Q's");
    d.Dv = in.v.dims[3];
  }
  if (d.Hq % d.Hkv != 0) return shape("q_num_heads must be a multiple of kv_num_heads");
  d.q_row0 = in.q_row0;
  d.Sq_all = in.q_len_total == 0 ? d.Sq : in.q_len_total;
  if (in.q_row0 < 0 || (in.q_len_total == 0 && in.q_row0 != 0) || d.Sq_all < d.Sq || d.q_row0 > d.Sq_all - d.Sq)
    return bad("Q's rows [q_row0, q_row0 + q_len) must lie in [0, q_len_total)");
  return Status::Ok();
}

// past_key and past_value (P, and so T = P + Skv), nonpad_kv_seqlen and attn_mask against Q, K, V.
Status past_and_mask_dims(const AttentionInputs& in, const AttentionAttrs& a, Dims* out) {
  Dims& d = *out;
  d.P = 0;
  if (in.past_key.present() != in.past_value.present()) return bad("past_key and past_value must be given together");
  if (in.past_key.present()) {
    for (const TensorRef* t : {&in.past_key, &in.past_value}) {
      if (t->dtype != in.q.dtype) return bad("past_key and past_value must have Q's element type");
      if (t->rank != 4) return shape("past_key and past_value must be 4D [B, kv_num_heads, past_len, head_size]");
    }
    const auto& pk = in.past_key.dims;
    const auto& pv = in.past_value.dims;
    if (pk[0] != d.B || pk[1] != d.Hkv || pk[3] != d.D)
      return shape("past_key must be [B, kv_num_heads, past_len, head_size]");
    if (pv[0] != d.B || pv[1] != d.Hkv || pv[2] != pk[2] || pv[3] != d.Dv)
      return shape("past_value must be [B, kv_num_heads, past_len, v_head_size]");
    if (pk[2] < 0) return shape("past_key's past_len must be >= 0");
    d.P = pk[2];
  }
  d.T = d.P + d.Skv;

  if (in.nonpad_kv_seqlen.present()) {
    if (a.opset < 24) return bad("nonpad_kv_seqlen needs opset 24");
    const TensorRef& n = in.nonpad_kv_seqlen;
    if (n.dtype != DType::kInt64) return bad("nonpad_kv_seqlen must be int64");
    if (n.rank != 1 || n.dims[0] != d.B) return shape("nonpad_kv_seqlen must be [B]");
    const auto* v = static_cast<const std::int64_t*>(n.data);
    for (std::int64_t b = 0; b < d.B; ++b)
      if (v[b] < 0 || v[b] > d.T) return bad("nonpad_kv_seqlen values must be in [0, total kv length]");
  }

  if (in.attn_mask.present()) {
    const TensorRef& m = in.attn_mask;
    if (m.dtype != DType::kFloat32 && m.dtype != DType::kFloat16 && m.dtype != DType::kBool)
      return bad("attn_mask must be float32, float16 or bool");
    if (m.rank < 1 || m.rank > 4) return shape("attn_mask must have rank 1 to 4");
    const std::int64_t target[4] = {d.B, d.Hq, d.Sq_all, d.T};
    const std::int64_t last = m.dims[m.rank - 1];
    if (last < 1 || last > d.T)
      return shape("attn_mask's last dimension must be in [1, total kv length] (shorter is padded with -inf)");
    for (int r = 0; r < m.rank - 1; ++r) {
      const std::int64_t want = target[4 - m.rank + r];
      if (m.dims[r] != 1 && m.dims[r] != want)
        return shape("attn_mask does not broadcast to [B, q_num_heads, q_len, total kv length]");
    }
  }
  return Status::Ok();
}

Status attention_dims(const AttentionInputs& in, const AttentionAttrs& a, Dims* out) {
  Dims d{};
  if (Status s = qkv_dims(in, a, &d); !s.ok()) return s;
  if (Status s = past_and_mask_dims(in, a, &d); !s.ok()) return s;
  if (Status s = onnx_attention_attrs_check(a); !s.ok()) return s;

  for (const std::int64_t n : {checked_product({d.B, d.Hq, d.Sq, d.D}), checked_product({d.B, d.Hkv, d.T, d.D}),
                               checked_product({d.B, d.Hkv, d.T, d.Dv}), checked_product({d.B, d.Hq, d.Sq, d.Dv})})
    if (n < 0) return {StatusCode::kTooLarge, "attention tensors too large for memory"};
  *out = d;
  return Status::Ok();
}

// Copies one [B][H][S][d] source (3D token-major or 4D head-major) into dst [B][H][dst_len][d]
// at sequence offset `at`.
void copy_heads(float* dst, std::size_t dst_len, std::size_t at, const float* src, bool three_d, std::size_t B,
                std::size_t H, std::size_t S, std::size_t d) {
  const Strides st = strides(three_d, H, S, d);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t s = 0; s < S; ++s)
        std::memcpy(dst + ((b * H + h) * dst_len + at + s) * d, src + b * st.b + h * st.h + s * st.s,
                    d * sizeof(float));
}

}  // namespace

Status onnx_attention_attrs_check(const AttentionAttrs& a) noexcept {
  if (a.qk_matmul_output_mode < 0 || a.qk_matmul_output_mode > 3)
    return bad("qk_matmul_output_mode must be 0, 1, 2 or 3");
  if (a.softmax_precision != 0 && a.softmax_precision != 1)
    return bad("softmax_precision must be FLOAT (1): posenc computes in float32");
  if (a.scale && !std::isfinite(*a.scale)) return bad("scale must be finite");
  if (!std::isfinite(a.softcap)) return bad("softcap must be finite");
  if (a.is_causal != 0 && a.is_causal != 1) return bad("is_causal must be 0 or 1");
  return Status::Ok();
}

std::int64_t TensorRef::size() const noexcept {
  std::int64_t n = 1;
  for (int r = 0; r < rank; ++r) n *= dims[r];
  return n;
}

Status onnx_attention_shapes(const AttentionInputs& in, const AttentionAttrs& attrs, AttentionShapes* shapes) noexcept {
  Dims d;
  if (Status s = attention_dims(in, attrs, &d); !s.ok()) return s;
  if (shapes == nullptr) return bad("shapes must not be null");
  AttentionShapes out;
  if (d.three_d) {
    out.y_rank = 3;
    out.y[0] = d.B;
    out.y[1] = d.Sq;
    out.y[2] = d.Hq * d.Dv;
  } else {
    out.y[0] = d.B;
    out.y[1] = d.Hq;
    out.y[2] = d.Sq;
    out.y[3] = d.Dv;
  }
  const std::int64_t pk[4] = {d.B, d.Hkv, d.T, d.D}, pv[4] = {d.B, d.Hkv, d.T, d.Dv}, qk[4] = {d.B, d.Hq, d.Sq, d.T};
  std::copy(pk, pk + 4, out.present_key);
  std::copy(pv, pv + 4, out.present_value);
  std::copy(qk, qk + 4, out.qk_matmul_output);
  *shapes = out;
  return Status::Ok();
}

Status onnx_attention(const AttentionInputs& in, const AttentionAttrs& a, float* y, float* present_key,
                      float* present_value, float* qk_matmul_output) noexcept {
  Dims d;
  if (Status s = attention_dims(in, a, &d); !s.ok()) return s;
  if (in.q.dtype != DType::kFloat32 || (in.attn_mask.present() && in.attn_mask.dtype == DType::kFloat16))
    return bad("onnx_attention computes float32 tensors (float16 ones go through onnx_attention_f16)");
  if (y == nullptr) return bad("Y must not be null");
  if (qk_matmul_output && checked_product({d.B, d.Hq, d.Sq, d.T}) < 0)
    return {StatusCode::kTooLarge, "qk_matmul_output too large for memory"};
  const auto B = static_cast<std::size_t>(d.B), Hq = static_cast<std::size_t>(d.Hq),
             Hkv = static_cast<std::size_t>(d.Hkv), Sq = static_cast<std::size_t>(d.Sq),
             Skv = static_cast<std::size_t>(d.Skv), P = static_cast<std::size_t>(d.P),
             T = static_cast<std::size_t>(d.T), D = static_cast<std::size_t>(d.D), Dv = static_cast<std::size_t>(d.Dv);

  Problem p;
  p.batch = B;
  p.q_heads = Hq;
  p.kv_heads = Hkv;
  p.q_len = Sq;
  p.kv_len = T;
  p.head_dim = D;
  p.v_dim = Dv;
  p.q = static_cast<const float*>(in.q.data);
  p.qs = strides(d.three_d, Hq, Sq, D);
  p.y = y;
  p.ys = strides(d.three_d, Hq, Sq, Dv);

  // Keys and values: read K and V in place unless a past must be prepended (then present_*,
  // the caller's output or our scratch, is built and read).
  std::vector<float> scratch_k, scratch_v;
  const bool build_present = in.past_key.present() || present_key || present_value;
  if (build_present) {
    float* pk = present_key;
    float* pv = present_value;
    try {
      if (!pk) {
        scratch_k.resize(B * Hkv * T * D);
        pk = scratch_k.data();
      }
      if (!pv) {
        scratch_v.resize(B * Hkv * T * Dv);
        pv = scratch_v.data();
      }
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "present_key / present_value too large for memory"};
    }
    if (P > 0) {
      copy_heads(pk, T, 0, static_cast<const float*>(in.past_key.data), false, B, Hkv, P, D);
      copy_heads(pv, T, 0, static_cast<const float*>(in.past_value.data), false, B, Hkv, P, Dv);
    }
    copy_heads(pk, T, P, static_cast<const float*>(in.k.data), d.three_d, B, Hkv, Skv, D);
    copy_heads(pv, T, P, static_cast<const float*>(in.v.data), d.three_d, B, Hkv, Skv, Dv);
    p.k = pk;
    p.v = pv;
    p.ks = strides(false, Hkv, T, D);
    p.vs = strides(false, Hkv, T, Dv);
  } else {
    p.k = static_cast<const float*>(in.k.data);
    p.v = static_cast<const float*>(in.v.data);
    p.ks = strides(d.three_d, Hkv, T, D);
    p.vs = strides(d.three_d, Hkv, T, Dv);
  }

  p.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(D)));
  p.softcap = a.softcap > 0.0 ? static_cast<float>(a.softcap) : 0.0f;

  if (in.attn_mask.present()) {
    const TensorRef& m = in.attn_mask;
    // Right-aligned numpy broadcasting to [B, Hq, Sq, mask_len]; broadcast dims get stride 0.
    std::int64_t dims[4] = {1, 1, 1, 1};
    for (int r = 0; r < m.rank; ++r) dims[4 - m.rank + r] = m.dims[r];
    const auto len = static_cast<std::size_t>(dims[3]);
    const std::size_t st_s = len, st_h = static_cast<std::size_t>(dims[2]) * st_s,
                      st_b = static_cast<std::size_t>(dims[1]) * st_h;
    p.m_ss = dims[2] == 1 ? 0 : st_s;
    p.m_sh = dims[1] == 1 ? 0 : st_h;
    p.m_sb = dims[0] == 1 ? 0 : st_b;
    p.mask_len = len;
    const auto row0 = static_cast<std::size_t>(d.q_row0) * p.m_ss;  // the piece's first query row
    if (m.dtype == DType::kBool) p.mask_b = static_cast<const std::uint8_t*>(m.data) + row0;
    else p.mask_f = static_cast<const float*>(m.data) + row0;
  }
  if (in.nonpad_kv_seqlen.present()) p.nonpad = static_cast<const std::int64_t*>(in.nonpad_kv_seqlen.data);
  p.causal = a.is_causal == 1;
  p.causal_offset.assign(B, d.q_row0);
  for (std::size_t b = 0; b < B; ++b) {
    if (in.past_key.present()) p.causal_offset[b] += d.P;
    else if (p.nonpad) p.causal_offset[b] += p.nonpad[b] - d.Sq_all;
  }
  p.qk = qk_matmul_output;
  p.qk_mode = a.qk_matmul_output_mode;
  return engine::run(p);
}

// ---- ONNX RotaryEmbedding ------------------------------------------------------------------------

namespace {

struct RotaryDims {
  std::int64_t B = 0, H = 0, S = 0, D = 0, rd = 0, half = 0;
};

// Every check of RotaryEmbedding-23's inputs and attributes; the sizes they give.
Status rotary_dims(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& a, RotaryDims* out) {
  if (!x.present() || !cos_cache.present() || !sin_cache.present())
    return bad("X, cos_cache and sin_cache are required");
  if (x.dtype != DType::kFloat32 || cos_cache.dtype != DType::kFloat32 || sin_cache.dtype != DType::kFloat32)
    return bad("X, cos_cache and sin_cache must be float32");
  if (x.rank != 3 && x.rank != 4)
    return shape("X must be 3D [B, S, num_heads*head_size] or 4D [B, num_heads, S, head_size]");
  for (int r = 0; r < x.rank; ++r)
    if (x.dims[r] < 1) return shape("X dimensions must be >= 1");
  if (a.interleaved != 0 && a.interleaved != 1) return bad("interleaved must be 0 or 1");
  std::int64_t B = x.dims[0], H, S, D;
  if (x.rank == 4) {
    H = x.dims[1];
    S = x.dims[2];
    D = x.dims[3];
  } else {
    if (a.num_heads <= 0) return bad("num_heads is required for 3D X");
    if (x.dims[2] % a.num_heads != 0) return shape("X's last dimension must be a multiple of num_heads");
    H = a.num_heads;
    S = x.dims[1];
    D = x.dims[2] / a.num_heads;
  }
  const std::int64_t rd = a.rotary_embedding_dim == 0 ? D : a.rotary_embedding_dim;
  if (rd < 0 || rd > D || rd % 2 != 0) return bad("rotary_embedding_dim must be even and <= head_size (0: head_size)");
  const std::int64_t half = rd / 2;
  if (cos_cache.rank != sin_cache.rank) return shape("cos_cache and sin_cache must have the same shape");
  for (int r = 0; r < cos_cache.rank; ++r)
    if (cos_cache.dims[r] != sin_cache.dims[r]) return shape("cos_cache and sin_cache must have the same shape");
  std::int64_t max_pos = 0;
  if (position_ids.present()) {
    if (position_ids.dtype != DType::kInt64) return bad("position_ids must be int64");
    if (position_ids.rank != 2 || position_ids.dims[0] != B || position_ids.dims[1] != S)
      return shape("position_ids must be [B, S]");
    if (cos_cache.rank != 2)
      return shape("cos_cache must be 2D [max_position, rotary_embedding_dim/2] with position_ids");
    if (cos_cache.dims[1] != half) return shape("cos_cache's last dimension must be rotary_embedding_dim / 2");
    max_pos = cos_cache.dims[0];
    const auto* ids = static_cast<const std::int64_t*>(position_ids.data);
    for (std::int64_t t = 0; t < B * S; ++t)
      if (ids[t] < 0 || ids[t] >= max_pos) return bad("position_ids must be in [0, cos_cache rows)");
  } else {
    if (cos_cache.rank != 3 || cos_cache.dims[0] != B || cos_cache.dims[1] != S)
      return shape("cos_cache must be 3D [B, S, rotary_embedding_dim/2] without position_ids");
    if (cos_cache.dims[2] != half) return shape("cos_cache's last dimension must be rotary_embedding_dim / 2");
  }
  if (checked_product({x.dims[0], x.dims[1], x.dims[2], x.rank == 4 ? x.dims[3] : 1}) < 0)
    return {StatusCode::kTooLarge, "X too large for memory"};
  *out = {B, H, S, D, rd, half};
  return Status::Ok();
}

}  // namespace

Status onnx_rotary_embedding_check(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& a) noexcept {
  RotaryDims d;
  return rotary_dims(x, cos_cache, sin_cache, position_ids, a, &d);
}

Status onnx_rotary_embedding(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                             const TensorRef& position_ids, const RotaryEmbeddingAttrs& a, float* y) noexcept {
  RotaryDims d;
  if (Status s = rotary_dims(x, cos_cache, sin_cache, position_ids, a, &d); !s.ok()) return s;
  const std::int64_t B = d.B, H = d.H, S = d.S, D = d.D, rd = d.rd, half = d.half;
  if (y == nullptr) return bad("Y must not be null");

  const auto* src = static_cast<const float*>(x.data);
  if (y != src) std::memcpy(y, src, static_cast<std::size_t>(x.size()) * sizeof(float));
  if (half == 0) return Status::Ok();
  // Split over blocks of tokens (b, s); each worker expands the interleaved tables into its own cd, sd.
  const auto tokens = static_cast<std::size_t>(B * S), uh = static_cast<std::size_t>(half),
             ud = static_cast<std::size_t>(D), urd = static_cast<std::size_t>(rd);
  const std::size_t block = pool::rows_per_task(static_cast<std::size_t>(H) * ud * sizeof(float));
  const std::size_t n_tasks = (tokens + block - 1) / block, n_workers = n_tasks > 1 ? pool::pool_workers() : 1;
  std::vector<float> expanded;
  try {
    expanded.resize(n_workers * 2 * urd);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rotary_embedding_dim too large for memory"};
  }
  const auto* cos = static_cast<const float*>(cos_cache.data);
  const auto* sin = static_cast<const float*>(sin_cache.data);
  const auto* ids = static_cast<const std::int64_t*>(position_ids.data);
  pool::parallel_for(n_tasks, n_workers, [&](std::size_t task, std::size_t worker) {
    float* cd = expanded.data() + worker * 2 * urd;
    float* sd = cd + urd;
    for (std::size_t bs = task * block; bs < std::min(tokens, (task + 1) * block); ++bs) {
      const auto b = static_cast<std::int64_t>(bs) / S, s = static_cast<std::int64_t>(bs) % S;
      const std::int64_t row = ids ? ids[b * S + s] : b * S + s;
      const float* c = cos + row * half;
      const float* sn = sin + row * half;
      if (a.interleaved) kernels::rope_expand_interleaved(c, sn, uh, cd, sd);
      for (std::int64_t h = 0; h < H; ++h) {
        float* xh = y + (x.rank == 4 ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D);
        if (a.interleaved) kernels::rope_rotate_interleaved(xh, 1, ud, urd, cd, sd);
        else kernels::rope_rotate_half_split(xh, 1, ud, uh, c, sn);
      }
    }
  });
  return Status::Ok();
}

}  // namespace posenc
