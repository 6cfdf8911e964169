// RoPE's adapters (js/rope.js, js/rope_params.js): the RoPE params object both ways — its fields
// listed once (kFields), which the model-file and attention adapters read too (embind_options.hpp)
// —, frequencies (RopeFrequencies: params → frequencies → rotation in one call), the rotations in
// each precision, M-RoPE, caches, shifted keys, configs.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace posenc_js {

using emscripten::val;

// ---- RoPE params: each field once ------------------------------------------------------------

namespace {

// A C++ enum name as the JS API spells it: camelCase ("half_split" → "halfSplit").
std::string camel(const char* snake) {
  std::string s;
  for (bool up = false; *snake; ++snake) {
    if (*snake == '_') {
      up = true;
    } else {
      s += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*snake))) : *snake;
      up = false;
    }
  }
  return s;
}

// The JS names of an enum's n values, in enum order.
template <class E>
std::vector<std::string> enum_names(int n, const char* (*name)(E) noexcept) {
  std::vector<std::string> names;
  for (int k = 0; k < n; ++k) names.push_back(camel(name(static_cast<E>(k))));
  return names;
}
std::vector<std::string> names_of(const posenc::RopeScaling*) {
  return enum_names(posenc::kNumRopeScalings, posenc::rope_scaling_name);
}
std::vector<std::string> names_of(const posenc::RopeLayout*) {
  return enum_names(posenc::kNumRopeLayouts, posenc::rope_layout_name);
}

// A field's value as the public params object holds it (posenc.d.ts RopeParams): numbers,
// booleans, arrays of numbers, and an enum by its JS name.
void read(const val& v, std::size_t* out) { *out = v.as<std::size_t>(); }
void read(const val& v, double* out) { *out = v.as<double>(); }
void read(const val& v, std::optional<double>* out) { *out = v.as<double>(); }
void read(const val& v, bool* out) { *out = v.as<bool>(); }
void read(const val& v, std::vector<double>* out) { *out = emscripten::convertJSArrayToNumberVector<double>(v); }
void read(const val& v, std::vector<std::size_t>* out) {
  out->clear();
  for (double x : emscripten::convertJSArrayToNumberVector<double>(v)) out->push_back(static_cast<std::size_t>(x));
}
template <class E>
void read_enum(const val& v, E* out) {
  const std::vector<std::string> names = names_of(out);
  const std::string name = v.as<std::string>();
  for (std::size_t k = 0; k < names.size(); ++k)
    if (name == names[k]) *out = static_cast<E>(k);
}
void read(const val& v, posenc::RopeScaling* out) { read_enum(v, out); }
void read(const val& v, posenc::RopeLayout* out) { read_enum(v, out); }

val write(std::size_t v) { return val(static_cast<double>(v)); }
val write(double v) { return val(v); }
val write(const std::optional<double>& v) { return v ? val(*v) : val::undefined(); }
val write(bool v) { return val(v); }
val write(const std::vector<double>& v) { return val::array(v); }
val write(const std::vector<std::size_t>& v) { return val::array(std::vector<double>(v.begin(), v.end())); }
template <class E>
val write_enum(E v) {
  const std::vector<std::string> names = names_of(&v);
  const auto k = static_cast<std::size_t>(v);
  return k < names.size() ? val(names[k]) : val::undefined();
}
val write(posenc::RopeScaling v) { return write_enum(v); }
val write(posenc::RopeLayout v) { return write_enum(v); }

// The type the JS layer checks a field's value against, and an enum's names.
const char* kind(const std::size_t*) { return "size"; }
const char* kind(const double*) { return "number"; }
const char* kind(const std::optional<double>*) { return "number"; }
const char* kind(const bool*) { return "bool"; }
const char* kind(const std::vector<double>*) { return "numbers"; }
const char* kind(const std::vector<std::size_t>*) { return "sizes"; }
const char* kind(const posenc::RopeScaling*) { return "choice"; }
const char* kind(const posenc::RopeLayout*) { return "choice"; }
template <class T>
std::vector<std::string> names_of(const T*) {
  return {};
}

// When the public params object (readModel's, ropeParamsFromConfig's) shows a field: always, when
// set (it differs from posenc::RopeParams{}'s value), or whenever its group shows.
enum class Shown { kAlways, kSet, kWithGroup };

using P = posenc::RopeParams;
template <auto M>
using Member = std::remove_reference_t<decltype(std::declval<P&>().*M)>;

struct Field {
  const char* name;   // the RopeParams member, as C++ messages name it (nullptr: they use the word
                      //   in prose, "required for yarn scaling")
  const char* group;  // where the public object holds it: "" (top level), "scaling" or "mrope"
  const char* key;    // its key there
  Shown shown;
  const char* scaling;  // "": shown for every scaling type; else only for this one
  bool required;        // whenever its group is given
  const char* flag;     // a bool the public object holds as one of two names ("false|true"), or nullptr
  void (*read)(const val& v, P& p);
  val (*write)(const P& p);
  bool (*is_set)(const P& p);
  const char* (*kind)();
  std::vector<std::string> (*names)();
};

template <auto M>
Field field(const char* name, const char* group, const char* key, Shown shown, const char* scaling = "",
            bool required = false, const char* flag = nullptr) {
  return {name,
          group,
          key,
          shown,
          scaling,
          required,
          flag,
          [](const val& v, P& p) { read(v, &(p.*M)); },
          [](const P& p) { return write(p.*M); },
          [](const P& p) { return !(p.*M == P{}.*M); },
          [] { return kind(static_cast<const Member<M>*>(nullptr)); },
          [] { return names_of(static_cast<const Member<M>*>(nullptr)); }};
}
constexpr bool kRequired = true;

// Every field of posenc::RopeParams, in the order the public object (posenc.d.ts RopeParams) shows
// them. Their defaults are RopeParams{}'s (rope.hpp): a field the caller leaves out keeps its default.
const Field kFields[] = {
    field<&P::head_dim>("head_dim", "", "headDim", Shown::kAlways, "", kRequired),
    field<&P::theta>("theta", "", "theta", Shown::kAlways),
    field<&P::layout>("layout", "", "layout", Shown::kAlways),
    field<&P::rot_dim>("rot_dim", "", "rotaryDim", Shown::kSet),
    field<&P::rot_offset>("rot_offset", "", "rotaryOffset", Shown::kSet),
    field<&P::partial_rotary_factor>("partial_rotary_factor", "", "partialRotaryFactor", Shown::kSet),
    field<&P::scaling>(nullptr, "scaling", "type", Shown::kAlways, "", kRequired),
    field<&P::factor>("factor", "scaling", "factor", Shown::kSet),
    field<&P::original_max_position_embeddings>("original_max_position_embeddings", "scaling",
                                                "originalMaxPositionEmbeddings", Shown::kSet),
    field<&P::max_position_embeddings>("max_position_embeddings", "scaling", "maxPositionEmbeddings", Shown::kSet),
    field<&P::beta_fast>("beta_fast", "scaling", "betaFast", Shown::kAlways, "yarn"),
    field<&P::beta_slow>("beta_slow", "scaling", "betaSlow", Shown::kAlways, "yarn"),
    field<&P::truncate>("truncate", "scaling", "truncate", Shown::kAlways, "yarn"),
    field<&P::mscale>("mscale", "scaling", "mscale", Shown::kSet, "yarn"),
    field<&P::mscale_all_dim>("mscale_all_dim", "scaling", "mscaleAllDim", Shown::kSet, "yarn"),
    field<&P::attention_factor>("attention_factor", "scaling", "attentionFactor", Shown::kSet),
    field<&P::low_freq_factor>("low_freq_factor", "scaling", "lowFreqFactor", Shown::kAlways, "llama3"),
    field<&P::high_freq_factor>("high_freq_factor", "scaling", "highFreqFactor", Shown::kAlways, "llama3"),
    field<&P::short_factor>("short_factor", "scaling", "shortFactor", Shown::kAlways, "longrope"),
    field<&P::long_factor>("long_factor", "scaling", "longFactor", Shown::kAlways, "longrope"),
    field<&P::context_length>("context_length", "scaling", "contextLength", Shown::kSet),
    field<&P::freq_factors>("freq_factors", "", "freqFactors", Shown::kSet),
    field<&P::mrope_section>("mrope_section", "mrope", "section", Shown::kSet, "", kRequired),
    field<&P::mrope_interleaved>("mrope_interleaved", "mrope", "interleaved", Shown::kWithGroup),
    field<&P::mrope_rest_unrotated>("mrope_rest_unrotated", "mrope", "rest", Shown::kSet, "", false,
                                    "temporal|unrotated"),
};

// A flag's two names: [false's, true's].
std::vector<std::string> flag_names(const char* flag) {
  const std::string both = flag;
  const auto bar = both.find('|');
  return {both.substr(0, bar), both.substr(bar + 1)};
}

bool shows(const Field& f, const P& p) {
  if (*f.scaling && f.scaling != camel(posenc::rope_scaling_name(p.scaling))) return false;
  return f.shown == Shown::kAlways || (f.shown == Shown::kSet && f.is_set(p));
}

// The fields as the JS layer checks them (ropeParamsFields): [{ name?, group, key, kind, names?,
// required? }] in kFields' order; kind 'size', 'number', 'bool', 'numbers', 'sizes', 'choice' or
// 'flag' (a choice of two names).
val rope_params_fields() {
  val list = val::array();
  for (const Field& f : kFields) {
    val o = val::object();
    if (f.name) o.set("name", std::string(f.name));
    o.set("group", std::string(f.group));
    o.set("key", std::string(f.key));
    o.set("kind", std::string(f.flag ? "flag" : f.kind()));
    if (const auto names = f.flag ? flag_names(f.flag) : f.names(); !names.empty()) o.set("names", val::array(names));
    if (f.required) o.set("required", true);
    list.call<void>("push", o);
  }
  return list;
}

}  // namespace

P rope_params(const val& p) {
  P r;
  const val groups[] = {p, p["scaling"], p["mrope"]};  // kFields' groups: "", "scaling", "mrope"
  for (const Field& f : kFields) {
    const val& holder = groups[!*f.group ? 0 : *f.group == 's' ? 1 : 2];
    if (holder.isUndefined() || holder.isNull()) continue;
    const val v = holder[f.key];
    if (v.isUndefined()) continue;
    f.read(f.flag ? val(v.as<std::string>() == flag_names(f.flag)[1]) : v, r);
  }
  return r;
}

val public_params(const P& p) {
  val out = val::object();
  for (const Field& f : kFields) {
    val holder = out;
    if (*f.group) {  // a group shows when one of its fields shows by itself; it is made at its first
      holder = out[f.group];
      if (holder.isUndefined()) {
        bool any = false;
        for (const Field& g : kFields) any = any || (std::string(g.group) == f.group && shows(g, p));
        if (!any) continue;
        holder = val::object();
        out.set(f.group, holder);
      }
    }
    if (!shows(f, p) && !(*f.group && f.shown == Shown::kWithGroup)) continue;
    const val v = f.write(p);
    holder.set(f.key, f.flag ? val(flag_names(f.flag)[v.as<bool>() ? 1 : 0]) : v);
  }
  return out;
}

posenc::RopeApplyOptions apply_options(int layout, int precision, double attention_factor, double rot_offset,
                                       const posenc::GgmlRope* ggml) {
  posenc::RopeApplyOptions o{static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
                             attention_factor, ggml};
  o.rot_offset = static_cast<std::size_t>(rot_offset);
  return o;
}

RopeFrequencies::RopeFrequencies(const val& f, bool ggml) {
  if (f.isNull() || f.isUndefined()) return;
  if (const val table = f["invFreq"]; !table.isUndefined()) {
    inv_freq_ = at<const double>(table.as<Ptr>());
    return;
  }
  compute(rope_params(f["params"]), static_cast<std::size_t>(f["seqLen"].as<double>()), ggml);
}

RopeFrequencies::RopeFrequencies(const P& p, std::size_t seq_len, bool ggml) { compute(p, seq_len, ggml); }

void RopeFrequencies::compute(const P& p, std::size_t seq_len, bool ggml) {
  const std::size_t n = posenc::rope_rot_dim(p) / 2;
  owned_.resize(n > 0 ? n : 1);
  inv_freq_ = owned_.data();
  status_ = posenc::rope_frequencies(p, seq_len, owned_.data(), n, &attention_factor_);
  if (status_.ok() && ggml) status_ = posenc::ggml_rope_params(p, seq_len, &ggml_.emplace());
}

}  // namespace posenc_js

namespace {

using emscripten::val;
using posenc_js::apply_options;
using posenc_js::rope_params;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;
using posenc_js::RopeFrequencies;

std::size_t rope_rot_dim(const val& params) { return posenc::rope_rot_dim(rope_params(params)); }

// The core's checks of params (rope_frequencies at seq_len; with ggml, ggml_rope_params too), which
// the JS layer runs before it allocates: [message, rot_dim].
val rope_params_check(const val& params, double seq_len, bool ggml) {
  const posenc::RopeParams p = rope_params(params);
  const RopeFrequencies f(p, static_cast<std::size_t>(seq_len), ggml);
  val result = val::array();
  result.call<void>("push", message(f.status()), static_cast<double>(posenc::rope_rot_dim(p)));
  return result;
}

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

// freq: RopeFrequencies' { invFreq } or { params, seqLen }; attention_factor NaN: the params'.
std::string apply_rope(Ptr x, double seq_len, double n_heads, double head_dim, const val& freq, double rot_dim, Ptr pos,
                       double pos_offset, int layout, int precision, double attention_factor, double rot_offset,
                       const val& xpos) {
  const RopeFrequencies f(freq);
  if (!f.status().ok()) return message(f.status());
  posenc::Xpos xp;
  auto o = apply_options(layout, precision, f.attention_factor(attention_factor), rot_offset);
  o.xpos = xpos_of(xpos, &xp);
  return message(posenc::apply_rope(at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(head_dim), f.inv_freq(), static_cast<std::size_t>(rot_dim),
                                    at<const double>(pos), pos_offset, o));
}

// The core's checks of a rotation (apply_rope_check), run by the JS layer before it allocates: the
// extents, where the rotation sits, xpos, the gain (attention_factor null: the frequencies' own),
// layout, precision (ggml: the params' ggml parameters) and pos_offset (null: positions are given).
// freq: { params, seqLen } (RopeFrequencies', checked again here) or null for a table of the
// caller's, which is not read. n_rows: M-RoPE's rows of positions (1 otherwise).
std::string apply_rope_check(double seq_len, double n_heads, double head_dim, const val& freq, double rot_dim,
                             const val& pos_offset, int layout, int precision, const val& attention_factor,
                             double rot_offset, const val& xpos, double n_rows) {
  const bool ggml = precision == static_cast<int>(posenc::Precision::kGgml);
  const RopeFrequencies f(freq, ggml);
  if (!f.status().ok()) return message(f.status());
  posenc::Xpos xp;
  const double gain = attention_factor.isNumber() ? attention_factor.as<double>() : f.attention_factor(NAN);
  auto o = apply_options(layout, precision, gain, rot_offset, f.ggml());
  o.xpos = xpos_of(xpos, &xp);
  const std::optional<double> offset =
      pos_offset.isNumber() ? std::optional<double>(pos_offset.as<double>()) : std::nullopt;
  return message(posenc::apply_rope_check(static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                          static_cast<std::size_t>(head_dim), static_cast<std::size_t>(rot_dim), offset,
                                          o, static_cast<std::size_t>(n_rows)));
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
// interleaved, section[3]; +4: the unclaimed pairs unrotated, llama.cpp's rule; freq as apply_rope's)
// or 2-D axial frequencies (mode 2, theta; freq null: they are computed here).
std::string apply_rope_rows(Ptr x, double seq_len, double n_heads, double head_dim, const val& freq, double rot_dim,
                            Ptr pos, int mode, const val& section, double theta, int layout, int precision,
                            double attention_factor, double rot_offset) {
  const auto half = static_cast<std::size_t>(rot_dim) / 2;
  std::vector<std::uint8_t> rows(half);
  std::vector<double> axial(mode == 2 ? half : 0);
  const RopeFrequencies f(freq);
  const posenc::Status s =
      mode == 2 ? posenc::rope_2d_frequencies(static_cast<std::size_t>(rot_dim), theta, axial.data(), rows.data())
      : f.status().ok() ? mrope_rows(section, (mode & 1) != 0, (mode & 4) != 0, half, &rows)
                        : f.status();
  if (!s.ok()) return message(s);
  return message(
      posenc::apply_rope_rows(at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                              static_cast<std::size_t>(head_dim), mode == 2 ? axial.data() : f.inv_freq(),
                              static_cast<std::size_t>(rot_dim), at<const double>(pos), mode == 2 ? 2 : 3, rows.data(),
                              apply_options(layout, precision, f.attention_factor(attention_factor), rot_offset)));
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

// shift_keys' own rules (shift_keys_check), which the JS layer asks before it allocates: delta_all
// null when there is a delta per token.
std::string shift_keys_check(const val& delta_all, int precision) {
  const std::optional<double> all = delta_all.isNumber() ? std::optional<double>(delta_all.as<double>()) : std::nullopt;
  return message(posenc::shift_keys_check(all, static_cast<posenc::Precision>(precision)));
}

// 2-D RoPE's rules (rope_2d_check), which the JS layer asks before it allocates.
std::string rope_2d_check(double head_dim, double theta) {
  return message(posenc::rope_2d_check(static_cast<std::size_t>(head_dim), theta));
}

std::string shift_keys(Ptr k, double seq_len, double n_heads, double head_dim, const val& freq, double rot_dim,
                       Ptr delta, double delta_all, int layout, int precision, double rot_offset) {
  const RopeFrequencies f(freq);
  if (!f.status().ok()) return message(f.status());
  return message(posenc::shift_keys(at<float>(k), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(head_dim), f.inv_freq(), static_cast<std::size_t>(rot_dim),
                                    at<const double>(delta), delta_all, static_cast<posenc::RopeLayout>(layout),
                                    static_cast<posenc::Precision>(precision), static_cast<std::size_t>(rot_offset)));
}

std::string rope_cache(Ptr cos, Ptr sin, double n_pos, const val& freq, double rot_dim, Ptr pos, double pos_offset,
                       int precision, double attention_factor) {
  const RopeFrequencies f(freq);
  if (!f.status().ok()) return message(f.status());
  return message(posenc::rope_cache(at<float>(cos), at<float>(sin), static_cast<std::size_t>(n_pos), f.inv_freq(),
                                    static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset,
                                    {posenc::RopeLayout::kHalfSplit, static_cast<posenc::Precision>(precision),
                                     f.attention_factor(attention_factor)}));
}

// Returns [message, detail, params]: params in their public shape (public_params).
val rope_params_from_config(const std::string& text, int dialect, const std::string& layer_type) {
  posenc::RopeParams p;
  std::string detail;
  const auto s =
      posenc::rope_params_from_config(text, {static_cast<posenc::ConfigDialect>(dialect), layer_type}, &p, &detail);
  val result = val::array();
  result.call<void>("push", message(s), detail, s.ok() ? posenc_js::public_params(p) : val::object());
  return result;
}

// Precision::kGgml: the ggml parameters of params, then the rotation or the cache.
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

// Runs call(g) with the ggml parameters of params, or returns why there are none.
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
  function("ropeParamsFields", &posenc_js::rope_params_fields);
  function("ropeRotDim", &rope_rot_dim);
  function("ropeParamsCheck", &rope_params_check);
  function("ropeFrequencies", &rope_frequencies);
  function("applyRope", &apply_rope);
  function("applyRopeCheck", &apply_rope_check);
  function("ropeCache", &rope_cache);
  function("shiftKeys", &shift_keys);
  function("shiftKeysCheck", &shift_keys_check);
  function("rope2dCheck", &rope_2d_check);
  function("applyRopeRows", &apply_rope_rows);
  function("mropePositions", &mrope_positions);
  function("ropeParamsFromConfig", &rope_params_from_config);
  function("ggmlRopeParams", &ggml_rope_params);
  function("applyRopeGgml", &apply_rope_ggml);
  function("applyRopeRowsGgml", &apply_rope_rows_ggml);
  function("ropeCacheGgml", &rope_cache_ggml);
}
