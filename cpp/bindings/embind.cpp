// Embind adapters: convert, call, convert back. Tensors travel as heap addresses (the JS layer
// allocates and copies with heapAlloc/heapFree); every function returns the C++ status message,
// "" for success, which the JS layer turns into a RangeError. No C++ exception ever crosses into
// JS (Emscripten 3.1.6 would deliver it as a bare number).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using Ptr = std::uintptr_t;

template <class T>
T* at(Ptr p) {
  return reinterpret_cast<T*>(p);
}

std::string message(const posenc::Status& s) { return s.ok() ? std::string() : s.message; }

Ptr heap_alloc(double bytes) {
  if (!(bytes >= 0 && bytes <= 4294967295.0)) return 0;
  return reinterpret_cast<Ptr>(std::malloc(bytes == 0 ? 1 : static_cast<std::size_t>(bytes)));
}
void heap_free(Ptr p) { std::free(at<void>(p)); }

std::string sinusoidal(Ptr out, double seq_len, double d_model, double base, int layout) {
  return message(posenc::sinusoidal(at<float>(out), static_cast<std::size_t>(seq_len),
                                    static_cast<std::size_t>(d_model),
                                    {base, static_cast<posenc::SinusoidalLayout>(layout)}));
}

// params: the JS layer's normalized object (every field present; NaN = unset for optionals).
posenc::RopeParams rope_params(const val& p) {
  posenc::RopeParams r;
  auto opt = [](double v) { return std::isnan(v) ? std::optional<double>() : std::optional<double>(v); };
  r.head_dim = p["headDim"].as<std::size_t>();
  r.rot_dim = p["rotaryDim"].as<std::size_t>();
  r.partial_rotary_factor = p["partialRotaryFactor"].as<double>();
  r.theta = p["theta"].as<double>();
  r.scaling = static_cast<posenc::RopeScaling>(p["scaling"].as<int>());
  r.factor = opt(p["factor"].as<double>());
  r.original_max_position_embeddings = p["originalMaxPositionEmbeddings"].as<std::size_t>();
  r.max_position_embeddings = p["maxPositionEmbeddings"].as<std::size_t>();
  r.beta_fast = p["betaFast"].as<double>();
  r.beta_slow = p["betaSlow"].as<double>();
  r.mscale = p["mscale"].as<double>();
  r.mscale_all_dim = p["mscaleAllDim"].as<double>();
  r.attention_factor = opt(p["attentionFactor"].as<double>());
  r.truncate = p["truncate"].as<bool>();
  r.low_freq_factor = p["lowFreqFactor"].as<double>();
  r.high_freq_factor = p["highFreqFactor"].as<double>();
  r.short_factor = emscripten::convertJSArrayToNumberVector<double>(p["shortFactor"]);
  r.long_factor = emscripten::convertJSArrayToNumberVector<double>(p["longFactor"]);
  return r;
}

std::size_t rope_rot_dim(const val& params) { return posenc::rope_rot_dim(rope_params(params)); }

// Writes inv_freq (float64) and returns [message, attention_factor].
val rope_frequencies(const val& params, double seq_len, Ptr inv_freq, double n_freq) {
  double attention_factor = 0.0;
  const auto s = posenc::rope_frequencies(rope_params(params), static_cast<std::size_t>(seq_len),
                                          at<double>(inv_freq), static_cast<std::size_t>(n_freq),
                                          &attention_factor);
  val result = val::array();
  result.call<void>("push", message(s), attention_factor);
  return result;
}

std::string apply_rope(Ptr x, double seq_len, double n_heads, double head_dim, Ptr inv_freq,
                       double rot_dim, Ptr pos, double pos_offset, int layout, int precision,
                       double attention_factor) {
  return message(posenc::apply_rope(
      at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
      static_cast<std::size_t>(head_dim), at<const double>(inv_freq),
      static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset,
      {static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
       attention_factor}));
}

std::string rope_cache(Ptr cos, Ptr sin, double n_pos, Ptr inv_freq, double rot_dim, Ptr pos,
                       double pos_offset, int precision, double attention_factor) {
  return message(posenc::rope_cache(
      at<float>(cos), at<float>(sin), static_cast<std::size_t>(n_pos), at<const double>(inv_freq),
      static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset,
      {posenc::RopeLayout::kHalfSplit, static_cast<posenc::Precision>(precision), attention_factor}));
}

std::string simd_arch() { return posenc::simd_arch(); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using emscripten::function;
  function("simdArch", &simd_arch);
  function("heapAlloc", &heap_alloc);
  function("heapFree", &heap_free);
  function("sinusoidal", &sinusoidal);
  function("ropeRotDim", &rope_rot_dim);
  function("ropeFrequencies", &rope_frequencies);
  function("applyRope", &apply_rope);
  function("ropeCache", &rope_cache);
}
