// pe.attention's adapter (js/attention.js), with Llama 4's temperature.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::apply_options;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

// o: the JS layer's normalized options (pointers as numbers, 0 = none; scale NaN = default).
std::string attention(Ptr q, Ptr k, Ptr v, double q_len, double kv_len, const val& o, Ptr out, Ptr weights) {
  posenc::AttentionOptions a;
  a.n_heads = o["nHeads"].as<std::size_t>();
  a.n_kv_heads = o["nKvHeads"].as<std::size_t>();
  a.head_dim = o["headDim"].as<std::size_t>();
  a.causal = o["causal"].as<bool>();
  const double scale = o["scale"].as<double>();
  if (!std::isnan(scale)) a.scale = scale;
  a.softcap = o["softcap"].as<double>();
  static_cast<posenc::PositionBias&>(a) = posenc_js::position_bias(o);
  a.rope_inv_freq = at<const double>(o["ropeInvFreq"].as<Ptr>());
  a.rope_rot_dim = o["ropeRotDim"].as<std::size_t>();
  a.rope = apply_options(o["ropeLayout"].as<int>(), o["ropePrecision"].as<int>(), o["ropeAttentionFactor"].as<double>(),
                         o["ropeRotOffset"].as<double>());
  a.bias = at<const float>(o["bias"].as<Ptr>());
  a.bias_per_head = o["biasPerHead"].as<bool>();
  if (const double w = o["window"].as<double>(); w > 0) a.window = static_cast<std::size_t>(w);
  a.sink_tokens = o["sinkTokens"].as<std::size_t>();
  a.sinks = at<const float>(o["sinks"].as<Ptr>());
  if (const double c = o["chunkSize"].as<double>(); c > 0) a.chunk_size = static_cast<std::size_t>(c);
  a.heads_major = o["headsMajor"].as<bool>();
  a.q_pos = static_cast<std::int64_t>(o["qPos"].as<double>());  // the JS layer's integer (its piece of q)
  if (o["kvHalf"].as<bool>()) a.kv_dtype = posenc::DType::kFloat16;
  if (const double f = o["floorScale"].as<double>(); f > 0)
    a.temperature = posenc::AttentionOptions::Temperature{f, o["attnScale"].as<double>()};
  return message(posenc::attention(at<const float>(q), at<const void>(k), at<const void>(v),
                                   static_cast<std::size_t>(q_len), static_cast<std::size_t>(kv_len), a, at<float>(out),
                                   at<float>(weights)));
}

// Llama 4's attention temperature at n positions (float64 in, float64 out).
void irope_scales(Ptr out, Ptr pos, double n, double floor_scale, double attn_scale) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    at<double>(out)[i] = posenc::irope_attention_scale(at<const double>(pos)[i], floor_scale, attn_scale);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_attention) {
  using emscripten::function;
  function("attention", &attention);
  function("iropeScales", &irope_scales);
}
