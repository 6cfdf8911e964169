// Embind adapters: convert, call, convert back. Tensors travel as heap addresses (the JS layer
// allocates and copies with heapAlloc/heapFree); every function returns the C++ status message,
// "" for success, which the JS layer turns into a RangeError. No C++ exception ever crosses into
// JS (Emscripten 3.1.6 would deliver it as a bare number).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <optional>
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

Ptr heap_alloc(double bytes) {
  if (!(bytes >= 0 && bytes <= 4294967295.0)) return 0;
  return reinterpret_cast<Ptr>(std::malloc(bytes == 0 ? 1 : static_cast<std::size_t>(bytes)));
}
void heap_free(Ptr p) { std::free(at<void>(p)); }

// pos: 0 for positions 0 … seq_len-1, else float64 positions[seq_len].
std::string sinusoidal(Ptr out, double seq_len, double d_model, double base, int layout, Ptr pos) {
  const posenc::SinusoidalParams params{base, static_cast<posenc::SinusoidalLayout>(layout)};
  const auto n = static_cast<std::size_t>(seq_len), d = static_cast<std::size_t>(d_model);
  return message(pos ? posenc::sinusoidal_at(at<float>(out), at<const double>(pos), n, d, params)
                     : posenc::sinusoidal(at<float>(out), n, d, params));
}

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
  for (int k = 0; k <= static_cast<int>(posenc::RopeScaling::kProportional); ++k)
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

posenc::RopeApplyOptions apply_options(int layout, int precision, double attention_factor, double rot_offset,
                                       const posenc::GgmlRope* ggml = nullptr) {
  posenc::RopeApplyOptions o{static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
                             attention_factor, ggml};
  o.rot_offset = static_cast<std::size_t>(rot_offset);
  return o;
}

// xpos: null, or { scaleBase, key, center } (checked by the JS layer and again by C++).
const posenc::Xpos* xpos_of(const val& xpos, posenc::Xpos* out) {
  if (xpos.isNull() || xpos.isUndefined()) return nullptr;
  *out = {xpos["scaleBase"].as<double>(), xpos["key"].as<bool>(), xpos["center"].as<double>()};
  return out;
}

std::string apply_rope(Ptr x, double seq_len, double n_heads, double head_dim, Ptr inv_freq,
                       double rot_dim, Ptr pos, double pos_offset, int layout, int precision,
                       double attention_factor, double rot_offset, const val& xpos) {
  posenc::Xpos xp;
  auto o = apply_options(layout, precision, attention_factor, rot_offset);
  o.xpos = xpos_of(xpos, &xp);
  return message(posenc::apply_rope(
      at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
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
  const posenc::Status s = mode == 2 ? posenc::rope_2d_frequencies(static_cast<std::size_t>(rot_dim), theta, at<double>(inv_freq), rows.data())
                                     : mrope_rows(section, (mode & 1) != 0, (mode & 4) != 0, half, &rows);
  if (!s.ok()) return message(s);
  return message(posenc::apply_rope_rows(
      at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
      static_cast<std::size_t>(head_dim), at<const double>(inv_freq), static_cast<std::size_t>(rot_dim),
      at<const double>(pos), mode == 2 ? 2 : 3, rows.data(), apply_options(layout, precision, attention_factor, rot_offset)));
}

// segments: [[text, t, h, w], ...]; writes pos [3][seq_len].
std::string mrope_positions(const val& segments, Ptr pos, double seq_len) {
  std::vector<posenc::MropeSegment> segs;
  const auto n = segments["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i)
    segs.push_back({segments[i][0].as<std::size_t>(), segments[i][1].as<std::size_t>(), segments[i][2].as<std::size_t>(),
                    segments[i][3].as<std::size_t>()});
  return message(posenc::mrope_positions(segs.data(), segs.size(), at<double>(pos), static_cast<std::size_t>(seq_len)));
}

std::string shift_keys(Ptr k, double seq_len, double n_heads, double head_dim, Ptr inv_freq, double rot_dim,
                       Ptr delta, double delta_all, int layout, int precision, double rot_offset) {
  return message(posenc::shift_keys(at<float>(k), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(head_dim), at<const double>(inv_freq),
                                    static_cast<std::size_t>(rot_dim), at<const double>(delta), delta_all,
                                    static_cast<posenc::RopeLayout>(layout), static_cast<posenc::Precision>(precision),
                                    static_cast<std::size_t>(rot_offset)));
}

std::string rope_cache(Ptr cos, Ptr sin, double n_pos, Ptr inv_freq, double rot_dim, Ptr pos,
                       double pos_offset, int precision, double attention_factor) {
  return message(posenc::rope_cache(
      at<float>(cos), at<float>(sin), static_cast<std::size_t>(n_pos), at<const double>(inv_freq),
      static_cast<std::size_t>(rot_dim), at<const double>(pos), pos_offset,
      {posenc::RopeLayout::kHalfSplit, static_cast<posenc::Precision>(precision), attention_factor}));
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

// Returns [message, detail, params]: params flat, as flat_params() writes them.
val rope_params_from_config(const std::string& text, int dialect, const std::string& layer_type) {
  posenc::RopeParams p;
  std::string detail;
  const auto s = posenc::rope_params_from_config(
      text, {static_cast<posenc::ConfigDialect>(dialect), layer_type}, &p, &detail);
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
                              static_cast<std::size_t>(head_dim), nullptr, g.n_dims, at<const double>(pos), pos_offset, o);
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
    return posenc::apply_rope_rows(at<float>(x), static_cast<std::size_t>(seq_len), static_cast<std::size_t>(n_heads),
                                   static_cast<std::size_t>(head_dim), nullptr, g.n_dims, at<const double>(pos), 3,
                                   rows.data(), apply_options(layout, static_cast<int>(posenc::Precision::kGgml), 1.0, rot_offset, &g));
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

// Model files. The JS layer holds the file's bytes read so far as heap chunks [offset, ptr, length];
// a read outside them fails and is recorded, so JS can fetch that range (asynchronously) and retry.
struct Chunks {
  std::vector<std::array<double, 3>> chunks;
  double need_offset = 0, need_length = 0;
};

bool read_chunks(void* user, std::uint64_t offset, std::size_t n, std::uint8_t* dst) {
  auto* c = static_cast<Chunks*>(user);
  std::uint64_t at_ = offset, end = offset + n;
  while (at_ < end) {
    bool found = false;
    for (const auto& ch : c->chunks) {
      const auto lo = static_cast<std::uint64_t>(ch[0]), len = static_cast<std::uint64_t>(ch[2]);
      if (at_ >= lo && at_ < lo + len) {
        const std::uint64_t take = std::min(end, lo + len) - at_;
        std::memcpy(dst + (at_ - offset), at<std::uint8_t>(static_cast<Ptr>(ch[1])) + (at_ - lo), take);
        at_ += take;
        found = true;
        break;
      }
    }
    if (!found) {
      c->need_offset = static_cast<double>(at_);
      c->need_length = static_cast<double>(end - at_);
      return false;
    }
  }
  return true;
}

val floats(const std::vector<float>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

// The public shape of readModel's result (posenc.d.ts, ModelInfo): a field only when the file says
// it; RoPE params flat, as flat_params() writes them (js/model_file.js gives them their public form).
val model_info(const posenc::ModelInfo& m) {
  val o = val::object();
  o.set("format", std::string(posenc::model_format_name(m.format)));
  o.set("architecture", m.architecture);
  if (m.n_heads) o.set("nHeads", m.n_heads);
  if (m.n_kv_heads) o.set("nKvHeads", m.n_kv_heads);
  if (m.context_length) o.set("contextLength", m.context_length);
  if (m.d_model) o.set("dModel", m.d_model);
  if (m.rope) o.set("rope", flat_params(*m.rope));
  if (m.sliding_window || m.rope_sliding) {
    val sliding = val::object();
    if (m.sliding_window) sliding.set("window", m.sliding_window);
    if (m.rope_sliding) sliding.set("params", flat_params(*m.rope_sliding));
    o.set("sliding", sliding);
  }
  if (m.alibi) {
    val a = val::object();
    a.set("nHeads", m.alibi->n_heads);
    a.set("maxBias", m.alibi->max_bias);
    o.set("alibi", a);
  }
  if (m.t5) {
    val t = val::object();
    t.set("nHeads", m.t5->n_heads);
    t.set("numBuckets", m.t5->num_buckets);
    t.set("maxDistance", m.t5->max_distance);
    t.set("bidirectional", m.t5->bidirectional);
    if (!m.t5->table.empty()) {
      t.set("name", m.t5->name);
      t.set("table", floats(m.t5->table));
    }
    o.set("t5", t);
  }
  if (m.position_table) {
    val t = val::object();
    t.set("name", m.position_table->name);
    t.set("maxLen", m.position_table->max_len);
    t.set("dModel", m.position_table->d_model);
    t.set("weights", m.position_table->weights.empty() ? val::null() : floats(m.position_table->weights));
    o.set("positionTable", t);
  }
  if (m.irope) {
    val r = val::object();
    r.set("chunkSize", m.irope->chunk_size);
    r.set("floorScale", m.irope->floor_scale);
    r.set("attnScale", m.irope->attn_scale);
    r.set("temperatureTuning", m.irope->temperature_tuning);
    val layers = val::array();
    for (bool b : m.irope->rope_layers) layers.call<void>("push", b);
    r.set("ropeLayers", layers);
    o.set("irope", r);
  }
  val tensors = val::array();
  for (const auto& t : m.tensors) {
    val e = val::object();
    e.set("name", t.name);
    e.set("dtype", t.dtype);
    val shape = val::array();
    for (auto d : t.shape) shape.call<void>("push", static_cast<double>(d));
    e.set("shape", shape);
    tensors.call<void>("push", e);
  }
  o.set("tensors", tensors);
  val warnings = val::array();
  for (const auto& w : m.warnings) warnings.call<void>("push", w);
  o.set("warnings", warnings);
  return o;
}

// Returns [message, detail, info | null, need_offset, need_length] (need_length > 0: supply those bytes).
val read_model(const val& chunks, double size, const std::string& table_name, double max_table_floats) {
  Chunks c;
  const auto n = chunks["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i)
    c.chunks.push_back({chunks[i][0].as<double>(), chunks[i][1].as<double>(), chunks[i][2].as<double>()});
  posenc::ModelInfo info;
  std::string detail;
  posenc::ReadOptions options;
  options.table_name = table_name;
  options.max_table_floats = static_cast<std::size_t>(max_table_floats);
  const posenc::ByteSource src{static_cast<std::uint64_t>(size), &c, &read_chunks};
  const auto s = posenc::read_model(src, &info, &detail, options);
  val result = val::array();
  const bool need = s.code == posenc::StatusCode::kUnavailable && c.need_length > 0;
  result.call<void>("push", message(s), detail, s.ok() ? model_info(info) : val::null(),
                    need ? c.need_offset : 0.0, need ? c.need_length : 0.0);
  return result;
}

std::string sinusoidal_shift(Ptr m, double k, double d_model, double base, int layout) {
  return message(posenc::sinusoidal_shift(at<float>(m), k, static_cast<std::size_t>(d_model),
                                          {base, static_cast<posenc::SinusoidalLayout>(layout)}));
}

std::string alibi_slopes(Ptr slopes, double n_heads, double max_bias) {
  return message(posenc::alibi_slopes(at<float>(slopes), static_cast<std::size_t>(n_heads), max_bias));
}

// query_offset: NaN = the default (queries at the last q_len key positions).
std::optional<std::size_t> query_offset(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(v));
}

std::string alibi_bias(Ptr bias, double n_heads, double q_len, double k_len, bool causal,
                       double max_bias, double q_offset) {
  return message(posenc::alibi_bias(at<float>(bias), static_cast<std::size_t>(n_heads),
                                    static_cast<std::size_t>(q_len),
                                    static_cast<std::size_t>(k_len), causal, max_bias, query_offset(q_offset)));
}

posenc::T5BucketParams t5_params(bool bidirectional, int num_buckets, int max_distance) {
  return {bidirectional, num_buckets, max_distance};
}

// Writes out[n] = bucket(rel[n]) (rel as float64 holding integers).
std::string t5_buckets(Ptr out, Ptr rel, double n, bool bidirectional, int num_buckets,
                       int max_distance) {
  const auto p = t5_params(bidirectional, num_buckets, max_distance);
  if (const auto s = posenc::t5_check(p); !s.ok()) return message(s);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    at<std::int32_t>(out)[i] = posenc::t5_bucket(static_cast<std::int64_t>(at<const double>(rel)[i]), p);
  return {};
}

std::string t5_bias(Ptr bias, Ptr table, double n_heads, double q_len, double k_len,
                    bool bidirectional, int num_buckets, int max_distance, double q_offset) {
  return message(posenc::t5_bias(at<float>(bias), at<const float>(table),
                                 static_cast<std::size_t>(n_heads), static_cast<std::size_t>(q_len),
                                 static_cast<std::size_t>(k_len),
                                 t5_params(bidirectional, num_buckets, max_distance), query_offset(q_offset)));
}

std::string learned_init(Ptr out, double max_len, double d_model, double seed, double std) {
  return message(posenc::learned_init(at<float>(out), static_cast<std::size_t>(max_len),
                                      static_cast<std::size_t>(d_model),
                                      static_cast<std::uint64_t>(seed), std));
}

std::string learned_lookup(Ptr out, Ptr table, double max_len, double d_model, Ptr pos, double n,
                           int offset) {
  return message(posenc::learned_lookup(at<float>(out), at<const float>(table),
                                        static_cast<std::size_t>(max_len),
                                        static_cast<std::size_t>(d_model), at<const std::int32_t>(pos),
                                        static_cast<std::size_t>(n), offset));
}

std::string embed(Ptr out, Ptr tokens, double n, Ptr tok_emb, double vocab, double d_model,
                  Ptr pos_emb, double pos_rows, Ptr pos, double scale) {
  return message(posenc::embed(at<float>(out), at<const std::int32_t>(tokens),
                               static_cast<std::size_t>(n), at<const float>(tok_emb),
                               static_cast<std::size_t>(vocab), static_cast<std::size_t>(d_model),
                               at<const float>(pos_emb), static_cast<std::size_t>(pos_rows),
                               at<const std::int32_t>(pos), scale));
}

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
  return {tensor_ref(in["Q"]), tensor_ref(in["K"]), tensor_ref(in["V"]), tensor_ref(in["attn_mask"]),
          tensor_ref(in["past_key"]), tensor_ref(in["past_value"]), tensor_ref(in["nonpad_kv_seqlen"]),
          count("qRow0"), count("qLenTotal")};
}

// attrs: every field present; scale NaN = default.
posenc::AttentionAttrs attention_attrs(const val& a) {
  posenc::AttentionAttrs r;
  r.is_causal = a["is_causal"].as<int>();
  const double scale = a["scale"].as<double>();
  if (!std::isnan(scale)) r.scale = scale;
  r.q_num_heads = static_cast<std::int64_t>(a["q_num_heads"].as<double>());
  r.kv_num_heads = static_cast<std::int64_t>(a["kv_num_heads"].as<double>());
  r.softcap = a["softcap"].as<double>();
  r.qk_matmul_output_mode = a["qk_matmul_output_mode"].as<int>();
  r.softmax_precision = a["softmax_precision"].as<int>();
  r.opset = a["opset"].as<int>();
  return r;
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

std::string onnx_attention(const val& inputs, const val& attrs, Ptr y, Ptr present_key,
                           Ptr present_value, Ptr qk) {
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
std::string onnx_rotary_embedding(const val& inputs, int interleaved, double rotary_embedding_dim,
                                  double num_heads, Ptr y) {
  const auto a = rotary_attrs(interleaved, rotary_embedding_dim, num_heads);
  const auto x = tensor_ref(inputs["X"]), cos = tensor_ref(inputs["cos_cache"]), sin = tensor_ref(inputs["sin_cache"]),
             ids = tensor_ref(inputs["position_ids"]);
  return message(y ? posenc::onnx_rotary_embedding(x, cos, sin, ids, a, at<float>(y))
                   : posenc::onnx_rotary_embedding_check(x, cos, sin, ids, a));
}

std::string onnx_rotary_embedding_f16(const val& inputs, int interleaved, double rotary_embedding_dim,
                                      double num_heads, Ptr y) {
  return message(posenc::onnx_rotary_embedding_f16(
      tensor_ref(inputs["X"]), tensor_ref(inputs["cos_cache"]), tensor_ref(inputs["sin_cache"]),
      tensor_ref(inputs["position_ids"]), rotary_attrs(interleaved, rotary_embedding_dim, num_heads), at<std::uint16_t>(y)));
}

// o: the JS layer's normalized options (pointers as numbers, 0 = none; scale NaN = default).
std::string attention(Ptr q, Ptr k, Ptr v, double q_len, double kv_len, const val& o, Ptr out,
                      Ptr weights) {
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
                                   static_cast<std::size_t>(q_len), static_cast<std::size_t>(kv_len), a,
                                   at<float>(out), at<float>(weights)));
}

// Llama 4's attention temperature at n positions (float64 in, float64 out).
void irope_scales(Ptr out, Ptr pos, double n, double floor_scale, double attn_scale) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    at<double>(out)[i] = posenc::irope_attention_scale(at<const double>(pos)[i], floor_scale, attn_scale);
}

// Bytes allocated and not freed in the WASM heap (dlmalloc's count), for leak checks.
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

std::string simd_arch() { return posenc::simd_arch(); }

// The kernels' thread pool (threads.hpp); in the threaded build the Emscripten pool holds n - 1 workers.
std::string set_num_threads(double n) {
  if (!(n >= 1 && n <= 64 && n == static_cast<int>(n))) return message({posenc::StatusCode::kBadArgument, "n_threads must be in [1, 64]"});
  return message(posenc::set_num_threads(static_cast<int>(n)));
}
double num_threads() { return posenc::num_threads(); }
// The names every enum takes, in enum order (the JS layer builds its checks from them).
val names() {
  auto list = [](int n, auto name) {
    val a = val::array();
    for (int k = 0; k < n; ++k) a.call<void>("push", std::string(name(k)));
    return a;
  };
  val out = val::object();
  out.set("ropeScalings", list(posenc::kNumRopeScalings, [](int k) { return posenc::rope_scaling_name(static_cast<posenc::RopeScaling>(k)); }));
  out.set("ropeLayouts", list(posenc::kNumRopeLayouts, [](int k) { return posenc::rope_layout_name(static_cast<posenc::RopeLayout>(k)); }));
  out.set("precisions", list(posenc::kNumPrecisions, [](int k) { return posenc::precision_name(static_cast<posenc::Precision>(k)); }));
  return out;
}

// The code of the last failed status a call returned: "bad_shape", "too_large", ...
std::string last_status_code() { return posenc::status_code_name(posenc_js::last_status_code()); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using emscripten::function;
  function("simdArch", &simd_arch);
  function("lastStatusCode", &last_status_code);
  function("names", &names);
  function("setNumThreads", &set_num_threads);
  function("numThreads", &num_threads);
  function("heapAlloc", &heap_alloc);
  function("heapFree", &heap_free);
  function("heapInUse", &heap_in_use);
  function("sinusoidal", &sinusoidal);
  function("ropeRotDim", &rope_rot_dim);
  function("ropeFrequencies", &rope_frequencies);
  function("applyRope", &apply_rope);
  function("ropeCache", &rope_cache);
  function("shiftKeys", &shift_keys);
  function("applyRopeRows", &apply_rope_rows);
  function("iropeScales", &irope_scales);
  function("mropePositions", &mrope_positions);
  function("ropeParamsFromConfig", &rope_params_from_config);
  function("ggmlRopeParams", &ggml_rope_params);
  function("applyRopeGgml", &apply_rope_ggml);
  function("applyRopeRowsGgml", &apply_rope_rows_ggml);
  function("ropeCacheGgml", &rope_cache_ggml);
  function("readModel", &read_model);
  function("sinusoidalShift", &sinusoidal_shift);
  function("alibiSlopes", &alibi_slopes);
  function("alibiBias", &alibi_bias);
  function("t5Buckets", &t5_buckets);
  function("t5Bias", &t5_bias);
  function("learnedInit", &learned_init);
  function("learnedLookup", &learned_lookup);
  function("embed", &embed);
  function("onnxAttentionShapes", &onnx_attention_shapes);
  function("onnxAttention", &onnx_attention);
  function("onnxRotaryEmbedding", &onnx_rotary_embedding);
  function("onnxAttentionF16", &onnx_attention_f16);
  function("onnxRotaryEmbeddingF16", &onnx_rotary_embedding_f16);
  function("attention", &attention);
}
