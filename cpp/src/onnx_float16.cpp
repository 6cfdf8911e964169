// ONNX Attention and RotaryEmbedding on float16 tensors: the inputs are widened to float32 (exact),
// the float32 operators run, and the outputs are rounded to float16 (to nearest, ties to even),
// the element type ONNX gives them. Compute stays float32, as onnxruntime's CPU kernels do.
#include <new>
#include <vector>

#include "half.hpp"
#include "kernels/kernels.hpp"
#include "posenc/onnx.hpp"
#include "refusals.hpp"

namespace posenc {
namespace {

// A float32 copy of a float16 tensor (other tensors pass through as they are).
struct Widened {
  std::vector<float> data;
  TensorRef ref;
};

void widen(const TensorRef& t, Widened* w) {
  w->ref = t;
  if (!t.present() || t.dtype != DType::kFloat16) return;
  const auto n = static_cast<std::size_t>(t.size());
  w->data.resize(n);
  kernels::widen_half(w->data.data(), static_cast<const std::uint16_t*>(t.data), n);
  w->ref.data = w->data.data();
  w->ref.dtype = DType::kFloat32;
}

void narrow(const std::vector<float>& src, std::uint16_t* dst) {
  if (dst != nullptr)
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = half::from_float(src[i]);
}

std::size_t count(const std::int64_t* dims, int rank) {
  std::size_t n = 1;
  for (int r = 0; r < rank; ++r) n *= static_cast<std::size_t>(dims[r]);
  return n;
}

bool half_or_absent(const TensorRef& t) { return !t.present() || t.dtype == DType::kFloat16; }

}  // namespace

Status onnx_attention_f16(const AttentionInputs& in, const AttentionAttrs& attrs, std::uint16_t* y,
                          std::uint16_t* present_key, std::uint16_t* present_value,
                          std::uint16_t* qk_matmul_output) noexcept {
  if (!(in.q.present() && in.k.present() && in.v.present())) return bad("Q, K and V are required");
  if (in.q.dtype != DType::kFloat16 || in.k.dtype != DType::kFloat16 || in.v.dtype != DType::kFloat16 ||
      !half_or_absent(in.past_key) || !half_or_absent(in.past_value))
    return bad("Q, K, V, past_key and past_value must all be float16 here (onnx_attention takes float32)");
  try {
    Widened q, k, v, mask, pk, pv;
    widen(in.q, &q);
    widen(in.k, &k);
    widen(in.v, &v);
    widen(in.attn_mask, &mask);
    widen(in.past_key, &pk);
    widen(in.past_value, &pv);
    const AttentionInputs w{q.ref,     k.ref,         v.ref, mask.ref, pk.ref, pv.ref, in.nonpad_kv_seqlen,
                            in.q_row0, in.q_len_total};
    AttentionShapes s;
    if (Status st = onnx_attention_shapes(w, attrs, &s); !st.ok()) return st;
    if (y == nullptr) return bad("Y must not be null");
    std::vector<float> y32(count(s.y, s.y_rank)), pk32, pv32, qk32;
    if (present_key) pk32.resize(count(s.present_key, 4));
    if (present_value) pv32.resize(count(s.present_value, 4));
    if (qk_matmul_output) qk32.resize(count(s.qk_matmul_output, 4));
    if (Status st = onnx_attention(w, attrs, y32.data(), present_key ? pk32.data() : nullptr,
                                   present_value ? pv32.data() : nullptr, qk_matmul_output ? qk32.data() : nullptr);
        !st.ok())
      return st;
    narrow(y32, y);
    narrow(pk32, present_key);
    narrow(pv32, present_value);
    narrow(qk32, qk_matmul_output);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "float16 tensors too large for memory"};
  }
}

Status onnx_rotary_embedding_f16(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                 const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs,
                                 std::uint16_t* y) noexcept {
  if (!x.present() || !cos_cache.present() || !sin_cache.present())
    return bad("X, cos_cache and sin_cache are required");
  if (x.dtype != DType::kFloat16 || cos_cache.dtype != DType::kFloat16 || sin_cache.dtype != DType::kFloat16)
    return bad("X, cos_cache and sin_cache must all be float16 here (onnx_rotary_embedding takes float32)");
  try {
    Widened xw, c, s;
    widen(x, &xw);
    widen(cos_cache, &c);
    widen(sin_cache, &s);
    if (Status st = onnx_rotary_embedding_check(xw.ref, c.ref, s.ref, position_ids, attrs); !st.ok()) return st;
    if (y == nullptr) return bad("Y must not be null");
    std::vector<float> y32(xw.data.size());
    if (Status st = onnx_rotary_embedding(xw.ref, c.ref, s.ref, position_ids, attrs, y32.data()); !st.ok()) return st;
    narrow(y32, y);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "float16 tensors too large for memory"};
  }
}

}  // namespace posenc
