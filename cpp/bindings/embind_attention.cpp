// pe.attention's adapter (js/attention.js), with Llama 4's temperature.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::apply_options;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;
using posenc_js::read_if;

// attention()'s options from the JS layer's normalized object o (js/attention.js), without the
// tensors: sizes, flags and values, each left out (or null) when not given — then the option keeps
// AttentionOptions' default.
posenc::AttentionOptions attention_options(const val& o) {
  posenc::AttentionOptions a;
  read_if(o, "nHeads", &a.n_heads);
  read_if(o, "nKvHeads", &a.n_kv_heads);
  read_if(o, "headDim", &a.head_dim);
  read_if(o, "causal", &a.causal);
  read_if(o, "scale", &a.scale);
  read_if(o, "softcap", &a.softcap);
  read_if(o, "window", &a.window);
  read_if(o, "sinkTokens", &a.sink_tokens);
  read_if(o, "chunkSize", &a.chunk_size);
  read_if(o, "headsMajor", &a.heads_major);
  if (o["kvHalf"].isTrue()) a.kv_dtype = posenc::DType::kFloat16;
  if (const val t = o["temperature"]; !t.isUndefined() && !t.isNull())
    a.temperature = posenc::AttentionOptions::Temperature{t["floorScale"].as<double>(), t["attnScale"].as<double>()};
  return a;
}

// The core's checks of attention's options (attention_check) for q_len × kv_len queries and keys,
// before the JS layer allocates anything: o as attention_options reads it, with sinks (when given)
// the caller's Float32Array of n_heads logits. Returns the message, "" when the call may go ahead.
std::string attention_check(double q_len, double kv_len, const val& o, bool with_weights) {
  posenc::AttentionOptions a = attention_options(o);
  std::vector<float> sinks;
  if (const val s = o["sinks"]; !s.isUndefined() && !s.isNull()) {
    sinks = emscripten::convertJSArrayToNumberVector<float>(s);
    sinks.resize(a.n_heads);  // the JS layer holds it to n_heads entries
    a.sinks = sinks.data();
  }
  return message(
      posenc::attention_check(static_cast<std::size_t>(q_len), static_cast<std::size_t>(kv_len), a, with_weights));
}

// o: attention_options' object with the heap addresses (0 = none) of the tensors the call reads
// beside q, k and v: the bias terms' tables (position_bias), bias (the mask), sinks; qPos, and
// ropeFrequencies (RopeFrequencies', null without RoPE) with RoPE's placement.
std::string attention(Ptr q, Ptr k, Ptr v, double q_len, double kv_len, const val& o, Ptr out, Ptr weights) {
  posenc::AttentionOptions a = attention_options(o);
  static_cast<posenc::PositionBias&>(a) = posenc_js::position_bias(o);
  const posenc_js::RopeFrequencies rope(o["ropeFrequencies"]);  // RoPE's, computed here from params
  if (!rope.status().ok()) return message(rope.status());
  a.rope_inv_freq = rope.inv_freq();
  a.rope_rot_dim = o["ropeRotDim"].as<std::size_t>();
  a.rope = apply_options(o["ropeLayout"].as<int>(), o["ropePrecision"].as<int>(),
                         rope.attention_factor(o["ropeAttentionFactor"].as<double>()), o["ropeRotOffset"].as<double>());
  a.bias = at<const float>(o["bias"].as<Ptr>());
  a.bias_per_head = o["biasPerHead"].as<bool>();
  a.sinks = at<const float>(o["sinks"].as<Ptr>());
  a.q_pos = static_cast<std::int64_t>(o["qPos"].as<double>());  // the JS layer's integer (its piece of q)
  return message(posenc::attention(at<const float>(q), at<const void>(k), at<const void>(v),
                                   static_cast<std::size_t>(q_len), static_cast<std::size_t>(kv_len), a, at<float>(out),
                                   at<float>(weights)));
}

// The temperature's rule (irope_check), which the JS layer asks before it allocates.
std::string irope_check(double floor_scale, double attn_scale) {
  return message(posenc::irope_check(floor_scale, attn_scale));
}

// Llama 4's attention temperature at n positions (float64 in, float64 out), after irope_check.
std::string irope_scales(Ptr out, Ptr pos, double n, double floor_scale, double attn_scale) {
  if (posenc::Status s = posenc::irope_check(floor_scale, attn_scale); !s.ok()) return message(s);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    at<double>(out)[i] = posenc::irope_attention_scale(at<const double>(pos)[i], floor_scale, attn_scale);
  return message(posenc::Status::Ok());
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_attention) {
  using emscripten::function;
  function("attention", &attention);
  function("attentionCheck", &attention_check);
  function("iropeCheck", &irope_check);
  function("iropeScales", &irope_scales);
}
