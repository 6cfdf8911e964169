// RoPE's adapters (js/rope.js, js/rope_params.js): frequencies, the rotations in each precision,
// M-RoPE, caches, shifted keys, configs; and the RoPE params object both ways, which the model-file
// and attention adapters read too (embind_options.hpp).
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

namespace posenc_js {

using emscripten::val;

// params: the JS layer's normalized object (every field present; NaN = unset for optionals).
posenc::RopeParams rope_params(const val& p) {
  // scaling arrives as its name ("none", "yarn", ...), checked by the JS layer.
  posenc::RopeParams r;
  auto opt = [](double v) { return std::isnan(v) ? std::optional<double>() : std::optional<double>(v); };
  r.head_dim = p["headDim"].as<std::size_t>();
  r.rot_dim = p["rotaryDim"].as<std::size_t>();
  r.partial_rotary_factor = p["partialRotaryFactor"].as<double>();
  r.theta = p["theta"].as<double>();
  const auto name = p["scaling"].as<std::string>();
  for (int k = 0; k < posenc::kNumRopeScalings; ++k)
    if (name == posenc::rope_scaling_name(static_cast<posenc::RopeScaling>(k)))
      r.scaling = static_cast<posenc::RopeScaling>(k);
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
  r.context_length = p["contextLength"].as<std::size_t>();
  r.freq_factors = emscripten::convertJSArrayToNumberVector<double>(p["freqFactors"]);
  for (double v : emscripten::convertJSArrayToNumberVector<double>(p["mropeSection"]))
    r.mrope_section.push_back(static_cast<std::size_t>(v));
  r.mrope_interleaved = p["mropeInterleaved"].as<bool>();
  r.mrope_rest_unrotated = p["mropeRestUnrotated"].as<bool>();
  r.rot_offset = p["rotaryOffset"].as<std::size_t>();
  r.layout = static_cast<posenc::RopeLayout>(p["layout"].as<int>());
  return r;
}

posenc::RopeApplyOptions apply_options(int layout, int precision, double attention_factor, double rot_offset,
                                       const posenc::GgmlRope* ggml) {
  posenc::RopeApplyOptions o{static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
                             attention_factor, ggml};
  o.rot_offset = static_cast<std::size_t>(rot_offset);
  return o;
}

// params in the flat shape rope_params() reads.
val flat_params(const posenc::RopeParams& p) {
  const double unset = std::nan("");
  val flat = val::object();
  flat.set("headDim", p.head_dim);
  flat.set("rotaryDim", p.rot_dim);
  flat.set("partialRotaryFactor", p.partial_rotary_factor);
  flat.set("theta", p.theta);
  flat.set("scaling", std::string(posenc::rope_scaling_name(p.scaling)));
  flat.set("factor", p.factor.value_or(unset));
  flat.set("originalMaxPositionEmbeddings", p.original_max_position_embeddings);
  flat.set("maxPositionEmbeddings", p.max_position_embeddings);
  flat.set("betaFast", p.beta_fast);
  flat.set("betaSlow", p.beta_slow);
  flat.set("mscale", p.mscale);
  flat.set("mscaleAllDim", p.mscale_all_dim);
  flat.set("attentionFactor", p.attention_factor.value_or(unset));
  flat.set("truncate", p.truncate);
  flat.set("lowFreqFactor", p.low_freq_factor);
  flat.set("highFreqFactor", p.high_freq_factor);
  flat.set("shortFactor", val::array(p.short_factor));
  flat.set("longFactor", val::array(p.long_factor));
  flat.set("contextLength", p.context_length);
  flat.set("freqFactors", val::array(p.freq_factors));
  flat.set("mropeSection", val::array(std::vector<double>(p.mrope_section.begin(), p.mrope_section.end())));
  flat.set("mropeInterleaved", p.mrope_interleaved);
  flat.set("mropeRestUnrotated", p.mrope_rest_unrotated);
  flat.set("rotaryOffset", p.rot_offset);
  flat.set("layout", static_cast<int>(p.layout));
  return flat;
}

}  // namespace posenc_js

namespace {

using emscripten::val;
using posenc_js::apply_options;
using posenc_js::flat_params;
using posenc_js::rope_params;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

std::size_t rope_rot_dim(const val& params) { return posenc::rope_rot_dim(rope_params(params)); }

// Writes inv_freq (float64) and returns [message, attention_factor].
val rope_frequencies(const val& params, double seq_len, Ptr inv_freq, double n_freq) {
  double attention_factor = 0.0;
  const auto s = posenc::rope_frequencies(rope_params(params), static_cast<std::size_t>(seq_len), at<double>(inv_freq),
                                          static_cast<std::size_t>(n_freq), &attention_factor);
  val result = val::array();
  result.call<void>("push", message(s), attention_factor);
  return result;
}

// xpos: null, or { scaleBase, key, center } (checked by the JS layer and again by C++).
const posenc::Xpos* xpos_of(const val& xpos, posenc::Xpos* out) {
  if (xpos.isNull() || xpos.isUndefined()) return nullptr;
  *out = {xpos["scaleBase"].as<double>(), xpos["key"].as<bool>(), xpos["center"].as<double>()};
  return out;
}

std::string apply_rope(Ptr x, double seq_len, double n_heads, double head_dim, Ptr inv_freq, double rot_dim, Ptr pos,
                       double pos_offset, int layout, int precision, double attention_factor, double rot_offset,
                       const val& xpos) {
  posenc::Xpos xp;
  auto o = apply_options(layout, precision, attention_factor, rot_offset);
  o.xpos = xpos_of(xpos, &xp);
  return message(posenc::apply_rope(at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(head_dim), at<const double>(inv_freq),
                                    static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset, o));
}

// M-RoPE's pair → row map from sections [3] (interleaved: Qwen3-VL's), or why there is none.
posenc::Status mrope_rows(const val& section, bool interleaved, bool rest_unrotated, std::size_t half,
                          std::vector<std::uint8_t>* rows) {
  std::vector<std::size_t> sec;
  for (double v : emscripten::convertJSArrayToNumberVector<double>(section)) sec.push_back(static_cast<std::size_t>(v));
  rows->resize(half);
  return posenc::mrope_pair_rows(sec.data(), sec.size(), interleaved, half, rows->data(), rest_unrotated);
}

// Multi-axis RoPE: pos [n_rows][seq_len]; pair rows from M-RoPE sections (mode 0/1: consecutive /
// interleaved, section[3]; +4: the unclaimed pairs unrotated, llama.cpp's rule) or 2-D axial
// frequencies (mode 2, theta; inv_freq is then written).
std::string apply_rope_rows(Ptr x, double seq_len, double n_heads, double head_dim, Ptr inv_freq, double rot_dim,
                            Ptr pos, int mode, const val& section, double theta, int layout, int precision,
                            double attention_factor, double rot_offset) {
  const auto half = static_cast<std::size_t>(rot_dim) / 2;
  std::vector<std::uint8_t> rows(half);
  const posenc::Status s = mode == 2 ? posenc::rope_2d_frequencies(static_cast<std::size_t>(rot_dim), theta,
                                                                   at<double>(inv_freq), rows.data())
                                     : mrope_rows(section, (mode & 1) != 0, (mode & 4) != 0, half, &rows);
  if (!s.ok()) return message(s);
  return message(posenc::apply_rope_rows(at<float>(x), static_cast<std::size_t>(seq_len),
                                         static_cast<std::size_t>(n_heads), static_cast<std::size_t>(head_dim),
                                         at<const double>(inv_freq), static_cast<std::size_t>(rot_dim),
                                         at<const double>(pos), mode == 2 ? 2 : 3, rows.data(),
                                         apply_options(layout, precision, attention_factor, rot_offset)));
}

// segments: [[text, t, h, w], ...]; writes pos [3][seq_len].
std::string mrope_positions(const val& segments, Ptr pos, double seq_len) {
  std::vector<posenc::MropeSegment> segs;
  const auto n = segments["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i)
    segs.push_back({segments[i][0].as<std::size_t>(), segments[i][1].as<std::size_t>(),
                    segments[i][2].as<std::size_t>(), segments[i][3].as<std::size_t>()});
  return message(posenc::mrope_positions(segs.data(), segs.size(), at<double>(pos), static_cast<std::size_t>(seq_len)));
}

std::string shift_keys(Ptr k, double seq_len, double n_heads, double head_dim, Ptr inv_freq, double rot_dim, Ptr delta,
                       double delta_all, int layout, int precision, double rot_offset) {
  return message(posenc::shift_keys(at<float>(k), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(head_dim), at<const double>(inv_freq),
                                    static_cast<std::size_t>(rot_dim), at<const double>(delta), delta_all,
                                    static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
                                    static_cast<std::size_t>(rot_offset)));
}

std::string rope_cache(Ptr cos, Ptr sin, double n_pos, Ptr inv_freq, double rot_dim, Ptr pos, double pos_offset,
                       int precision, double attention_factor) {
  return message(posenc::rope_cache(
      at<float>(cos), at<float>(sin), static_cast<std::size_t>(n_pos), at<const double>(inv_freq),
      static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset,
      {posenc::RopeLayout::kHalfSplit, static_cast<posenc::Precision>(precision), attention_factor}));
}

// Returns [message, detail, params]: params flat, as flat_params() writes them.
val rope_params_from_config(const std::string& text, int dialect, const std::string& layer_type) {
  posenc::RopeParams p;
  std::string detail;
  const auto s =
      posenc::rope_params_from_config(text, {static_cast<posenc::ConfigDialect>(dialect), layer_type}, &p, &detail);
  val result = val::array();
  result.call<void>("push", message(s), detail, s.ok() ? flat_params(p) : val::object());
  return result;
}

// Precision::kGgml: the ggml parameters of params (flat), then the rotation or the cache.
val ggml_rope_params(const val& params, double seq_len) {
  posenc::GgmlRope g;
  const auto s = posenc::ggml_rope_params(rope_params(params), static_cast<std::size_t>(seq_len), &g);
  val out = val::object();
  if (s.ok()) {
    out.set("nDims", g.n_dims);
    out.set("freqBase", g.freq_base);
    out.set("freqScale", g.freq_scale);
    out.set("extFactor", g.ext_factor);
    out.set("attnFactor", g.attn_factor);
    out.set("corrDims", val::array(std::vector<float>{g.corr_low, g.corr_high}));
    out.set("freqFactors", val::array(g.freq_factors));
  }
  val result = val::array();
  result.call<void>("push", message(s), out);
  return result;
}

// Runs call(g) with the ggml parameters of params (flat), or returns why there are none.
template <class F>
std::string with_ggml(const val& params, double rope_seq_len, F call) {
  posenc::GgmlRope g;
  if (const auto s = posenc::ggml_rope_params(rope_params(params), static_cast<std::size_t>(rope_seq_len), &g); !s.ok())
    return message(s);
  return message(call(g));
}

std::string apply_rope_ggml(Ptr x, double seq_len, double n_heads, double head_dim, const val& params,
                            double rope_seq_len, Ptr pos, double pos_offset, int layout, double rot_offset,
                            const val& xpos) {
  return with_ggml(params, rope_seq_len, [&](const posenc::GgmlRope& g) {
    posenc::Xpos xp;
    auto o = apply_options(layout, static_cast<int>(posenc::Precision::kGgml), 1.0, rot_offset, &g);
    o.xpos = xpos_of(xpos, &xp);
    return posenc::apply_rope(at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                              static_cast<std::size_t>(head_dim), nullptr, g.n_dims, at<const double>(pos), pos_offset,
                              o);
  });
}

// M-RoPE with ggml's angle (llama.cpp's ggml_rope_multi, MROPE / IMROPE): each position row's
// tables formed as ggml_rope_ext forms them, pair k taking its section's row.
std::string apply_rope_rows_ggml(Ptr x, double seq_len, double n_heads, double head_dim, const val& params,
                                 double rope_seq_len, Ptr pos, bool interleaved, bool rest_unrotated,
                                 const val& section, int layout, double rot_offset) {
  return with_ggml(params, rope_seq_len, [&](const posenc::GgmlRope& g) {
    std::vector<std::uint8_t> rows;
    if (const auto s = mrope_rows(section, interleaved, rest_unrotated, g.n_dims / 2, &rows); !s.ok()) return s;
    return posenc::apply_rope_rows(
        at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
        static_cast<std::size_t>(head_dim), nullptr, g.n_dims, at<const double>(pos), 3, rows.data(),
        apply_options(layout, static_cast<int>(posenc::Precision::kGgml), 1.0, rot_offset, &g));
  });
}

std::string rope_cache_ggml(Ptr cos, Ptr sin, double n_pos, const val& params, double rope_seq_len, Ptr pos,
                            double pos_offset) {
  return with_ggml(params, rope_seq_len, [&](const posenc::GgmlRope& g) {
    return posenc::rope_cache(at<float>(cos), at<float>(sin), static_cast<std::size_t>(n_pos), nullptr, g.n_dims,
                              at<const double>(pos), pos_offset,
                              {posenc::RopeLayout::kHalfSplit, posenc::Precision::kGgml, 1.0, &g});
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_rope) {
  using emscripten::function;
  function("ropeRotDim", &rope_rot_dim);
  function("ropeFrequencies", &rope_frequencies);
  function("applyRope", &apply_rope);
  function("ropeCache", &rope_cache);
  function("shiftKeys", &shift_keys);
  function("applyRopeRows", &apply_rope_rows);
  function("mropePositions", &mrope_positions);
  function("ropeParamsFromConfig", &rope_params_from_config);
  function("ggmlRopeParams", &ggml_rope_params);
  function("applyRopeGgml", &apply_rope_ggml);
  function("applyRopeRowsGgml", &apply_rope_rows_ggml);
  function("ropeCacheGgml", &rope_cache_ggml);
}
