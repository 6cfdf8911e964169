// Fuzz target: ONNX Attention and RotaryEmbedding input/attribute validation over random shapes,
// ranks, dtypes, optional inputs and attributes. Buffers always match their dims (the API's
// contract); everything else is arbitrary. A call either returns a status or writes outputs of the
// shapes it reported, finite when the inputs are (and the scale does not overflow the scores).
#include <cmath>
#include <cstdint>
#include <vector>

#include "input.hpp"
#include "posenc/posenc.hpp"

namespace {

struct Owned {
  std::vector<float> f;
  std::vector<std::uint8_t> b;
  std::vector<std::int64_t> i;
  posenc::TensorRef ref;
};

// A tensor of random rank (1…4) and dims (0…5), of the given dtype, or absent.
Owned tensor(FuzzInput& in, posenc::DType dtype, bool may_be_absent) {
  Owned t;
  if (may_be_absent && in.flag()) return t;
  t.ref.rank = static_cast<int>(in.range(1, 4));
  std::size_t n = 1;
  for (int r = 0; r < t.ref.rank; ++r) {
    t.ref.dims[r] = static_cast<std::int64_t>(in.range(0, 5));
    n *= static_cast<std::size_t>(t.ref.dims[r]);
  }
  t.ref.dtype = dtype;
  if (dtype == posenc::DType::kFloat32) {
    t.f.resize(n + 1);
    for (auto& v : t.f) v = in.finite();
    t.ref.data = t.f.data();
  } else if (dtype == posenc::DType::kBool) {
    t.b.resize(n + 1);
    for (auto& v : t.b) v = in.flag();
    t.ref.data = t.b.data();
  } else {
    t.i.resize(n + 1);
    for (auto& v : t.i) v = static_cast<std::int64_t>(in.range(0, 12)) - 2;
    t.ref.data = t.i.data();
  }
  return t;
}

std::size_t count(const std::int64_t* dims, int rank) {
  std::size_t n = 1;
  for (int r = 0; r < rank; ++r) n *= static_cast<std::size_t>(dims[r]);
  return n;
}

void check_finite(const std::vector<float>& v, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k)
    if (std::isnan(v[k])) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in{data, size};
  if (in.flag()) {
    Owned x = tensor(in, posenc::DType::kFloat32, false);
    Owned cos = tensor(in, posenc::DType::kFloat32, false);
    Owned sin = cos;
    sin.ref.data = sin.f.data();
    Owned pos = tensor(in, posenc::DType::kInt64, true);
    posenc::RotaryEmbeddingAttrs a;
    a.interleaved = static_cast<int>(in.range(0, 2));
    a.rotary_embedding_dim = static_cast<std::int64_t>(in.range(0, 10));
    a.num_heads = static_cast<std::int64_t>(in.range(0, 4));
    std::vector<float> y(count(x.ref.dims, x.ref.rank) + 1);
    if (posenc::onnx_rotary_embedding(x.ref, cos.ref, sin.ref, pos.ref, a, y.data()).ok())
      check_finite(y, count(x.ref.dims, x.ref.rank));
    return 0;
  }
  posenc::AttentionInputs inputs;
  Owned q = tensor(in, posenc::DType::kFloat32, false), k = tensor(in, posenc::DType::kFloat32, false),
        v = tensor(in, posenc::DType::kFloat32, false);
  Owned mask = tensor(in, in.flag() ? posenc::DType::kBool : posenc::DType::kFloat32, true);
  Owned pk = tensor(in, posenc::DType::kFloat32, true), pv = tensor(in, posenc::DType::kFloat32, true);
  Owned nonpad = tensor(in, posenc::DType::kInt64, true);
  inputs.q = q.ref;
  inputs.k = k.ref;
  inputs.v = v.ref;
  inputs.attn_mask = mask.ref;
  inputs.past_key = pk.ref;
  inputs.past_value = pv.ref;
  inputs.nonpad_kv_seqlen = nonpad.ref;
  posenc::AttentionAttrs a;
  a.is_causal = static_cast<int>(in.range(0, 2));
  a.q_num_heads = static_cast<std::int64_t>(in.range(0, 6));
  a.kv_num_heads = static_cast<std::int64_t>(in.range(0, 6));
  a.qk_matmul_output_mode = static_cast<int>(in.range(0, 4));
  a.softmax_precision = static_cast<int>(in.range(0, 2));
  a.opset = in.flag() ? 24 : 23;
  if (in.flag()) a.scale = in.any_float();
  if (in.flag()) a.softcap = in.finite(8.0f);
  posenc::AttentionShapes shapes;
  if (!posenc::onnx_attention_shapes(inputs, a, &shapes).ok()) return 0;
  std::vector<float> y(count(shapes.y, shapes.y_rank) + 1), present_k(count(shapes.present_key, 4) + 1),
      present_v(count(shapes.present_value, 4) + 1), qk(count(shapes.qk_matmul_output, 4) + 1);
  const bool want_qk = in.flag();
  if (!posenc::onnx_attention(inputs, a, y.data(), present_k.data(), present_v.data(), want_qk ? qk.data() : nullptr)
           .ok())
    __builtin_trap();  // shapes said yes: the run must too
  // Finite inputs give finite outputs as long as the scaled scores fit in a float (|q|, |k| <= 4,
  // head size <= 20 here); a scale near FLT_MAX overflows the scores, as it would anywhere.
  if (!a.scale || std::fabs(*a.scale) <= 1e30) check_finite(y, count(shapes.y, shapes.y_rank));
  return 0;
}
