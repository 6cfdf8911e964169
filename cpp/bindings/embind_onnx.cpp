// The ONNX operators' adapters (js/onnx.js): Attention and RotaryEmbedding, float32 and float16.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

// {ptr, dtype: 0 float32 | 1 bool | 2 int64, dims: [...]} or undefined → TensorRef.
posenc::TensorRef tensor_ref(const val& t) {
  posenc::TensorRef r;
  if (t.isUndefined() || t.isNull()) return r;
  r.data = at<const void>(t["ptr"].as<Ptr>());
  r.dtype = static_cast<posenc::DType>(t["dtype"].as<int>());
  const val dims = t["dims"];
  r.rank = dims["length"].as<int>();
  for (int d = 0; d < r.rank && d < 4; ++d) r.dims[d] = static_cast<std::int64_t>(dims[d].as<double>());
  return r;
}

// qRow0 / qLenTotal (optional): Q is that piece of the queries (the JS layer streams Q).
posenc::AttentionInputs attention_inputs(const val& in) {
  const auto count = [&](const char* key) {
    return in[key].isUndefined() ? std::int64_t{0} : static_cast<std::int64_t>(in[key].as<double>());
  };
  return {tensor_ref(in["Q"]),
          tensor_ref(in["K"]),
          tensor_ref(in["V"]),
          tensor_ref(in["attn_mask"]),
          tensor_ref(in["past_key"]),
          tensor_ref(in["past_value"]),
          tensor_ref(in["nonpad_kv_seqlen"]),
          count("qRow0"),
          count("qLenTotal")};
}

// attrs: every field present; scale null = default.
posenc::AttentionAttrs attention_attrs(const val& a) {
  posenc::AttentionAttrs r;
  r.is_causal = a["is_causal"].as<int>();
  if (const val scale = a["scale"]; !scale.isNull()) r.scale = scale.as<double>();
  r.q_num_heads = static_cast<std::int64_t>(a["q_num_heads"].as<double>());
  r.kv_num_heads = static_cast<std::int64_t>(a["kv_num_heads"].as<double>());
  r.softcap = a["softcap"].as<double>();
  r.qk_matmul_output_mode = a["qk_matmul_output_mode"].as<int>();
  r.softmax_precision = a["softmax_precision"].as<int>();
  r.opset = a["opset"].as<int>();
  return r;
}

// The attributes' rules (onnx_attention_attrs_check), which the JS layer asks before it allocates.
std::string onnx_attention_attrs_check(const val& attrs) {
  return message(posenc::onnx_attention_attrs_check(attention_attrs(attrs)));
}

val dims_array(const std::int64_t* d, int rank) {
  val out = val::array();
  for (int i = 0; i < rank; ++i) out.call<void>("push", static_cast<double>(d[i]));
  return out;
}

// [message, {Y, present_key, present_value, qk_matmul_output}: dims arrays]
val onnx_attention_shapes(const val& inputs, const val& attrs) {
  posenc::AttentionShapes shapes;
  const auto s = posenc::onnx_attention_shapes(attention_inputs(inputs), attention_attrs(attrs), &shapes);
  val dims = val::object();
  if (s.ok()) {
    dims.set("Y", dims_array(shapes.y, shapes.y_rank));
    dims.set("present_key", dims_array(shapes.present_key, 4));
    dims.set("present_value", dims_array(shapes.present_value, 4));
    dims.set("qk_matmul_output", dims_array(shapes.qk_matmul_output, 4));
  }
  val result = val::array();
  result.call<void>("push", message(s), dims);
  return result;
}

std::string onnx_attention(const val& inputs, const val& attrs, Ptr y, Ptr present_key, Ptr present_value, Ptr qk) {
  return message(posenc::onnx_attention(attention_inputs(inputs), attention_attrs(attrs), at<float>(y),
                                        at<float>(present_key), at<float>(present_value), at<float>(qk)));
}

// float16 outputs (uint16 bits) for float16 inputs; otherwise as onnx_attention.
std::string onnx_attention_f16(const val& inputs, const val& attrs, Ptr y, Ptr present_key, Ptr present_value,
                               Ptr qk_matmul_output) {
  return message(posenc::onnx_attention_f16(attention_inputs(inputs), attention_attrs(attrs), at<std::uint16_t>(y),
                                            at<std::uint16_t>(present_key), at<std::uint16_t>(present_value),
                                            at<std::uint16_t>(qk_matmul_output)));
}

posenc::RotaryEmbeddingAttrs rotary_attrs(int interleaved, double rotary_embedding_dim, double num_heads) {
  posenc::RotaryEmbeddingAttrs a;
  a.interleaved = interleaved;
  a.rotary_embedding_dim = static_cast<std::int64_t>(rotary_embedding_dim);
  a.num_heads = static_cast<std::int64_t>(num_heads);
  return a;
}

// y: 0 to check only (the JS layer checks the whole tensor once, then rotates it in pieces).
std::string onnx_rotary_embedding(const val& inputs, int interleaved, double rotary_embedding_dim, double num_heads,
                                  Ptr y) {
  const auto a = rotary_attrs(interleaved, rotary_embedding_dim, num_heads);
  const auto x = tensor_ref(inputs["X"]), cos = tensor_ref(inputs["cos_cache"]), sin = tensor_ref(inputs["sin_cache"]),
             ids = tensor_ref(inputs["position_ids"]);
  return message(y ? posenc::onnx_rotary_embedding(x, cos, sin, ids, a, at<float>(y))
                   : posenc::onnx_rotary_embedding_check(x, cos, sin, ids, a));
}

std::string onnx_rotary_embedding_f16(const val& inputs, int interleaved, double rotary_embedding_dim, double num_heads,
                                      Ptr y) {
  return message(posenc::onnx_rotary_embedding_f16(tensor_ref(inputs["X"]), tensor_ref(inputs["cos_cache"]),
                                                   tensor_ref(inputs["sin_cache"]), tensor_ref(inputs["position_ids"]),
                                                   rotary_attrs(interleaved, rotary_embedding_dim, num_heads),
                                                   at<std::uint16_t>(y)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_onnx) {
  using emscripten::function;
  function("onnxAttentionAttrsCheck", &onnx_attention_attrs_check);
  function("onnxAttentionShapes", &onnx_attention_shapes);
  function("onnxAttention", &onnx_attention);
  function("onnxRotaryEmbedding", &onnx_rotary_embedding);
  function("onnxAttentionF16", &onnx_attention_f16);
  function("onnxRotaryEmbeddingF16", &onnx_rotary_embedding_f16);
}
