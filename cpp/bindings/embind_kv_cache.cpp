// Embind adapters for posenc::KvCache (js/kv_cache.js is the API): the cache lives in the heap
// behind a handle (its address as a number) that the JS object holds and frees with
// kvCacheDelete. Every call returns the C++ status message, "" for success.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <memory>
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
using posenc_js::read_if;

posenc::KvCache* cache(Ptr h) { return at<posenc::KvCache>(h); }

// The cache's sizes from the JS layer's normalized options o (nKvHeads, headDim, capacity, half,
// window, sinkTokens; 0 = no window).
posenc::KvCacheOptions cache_options(const val& o) {
  posenc::KvCacheOptions c;
  c.n_kv_heads = o["nKvHeads"].as<std::size_t>();
  c.head_dim = o["headDim"].as<std::size_t>();
  c.capacity = o["capacity"].as<std::size_t>();
  c.dtype = o["half"].as<bool>() ? posenc::DType::kFloat16 : posenc::DType::kFloat32;
  c.window = o["window"].as<std::size_t>();
  c.sink_tokens = o["sinkTokens"].as<std::size_t>();
  return c;
}

// The core's checks of the cache's sizes (KvCache::create_check), before the JS layer allocates.
std::string kv_cache_create_check(const val& o) { return message(posenc::KvCache::create_check(cache_options(o))); }

// o: cache_options' object with RoPE's (ropeFrequencies: RopeFrequencies', null without RoPE;
// precision ggml's parameters are formed here from its params). Returns [message, handle].
val kv_cache_create(const val& o) {
  posenc::KvCacheOptions c = cache_options(o);
  c.rope_rot_dim = o["ropeRotDim"].as<std::size_t>();
  c.rope.layout = static_cast<posenc::RopeLayout>(o["ropeLayout"].as<int>());
  c.rope.precision = static_cast<posenc::Precision>(o["ropePrecision"].as<int>());
  c.rope.rot_offset = o["ropeRotOffset"].as<std::size_t>();
  const posenc_js::RopeFrequencies rope(o["ropeFrequencies"], c.rope.precision == posenc::Precision::kGgml);
  c.rope_inv_freq = rope.inv_freq();
  c.rope.attention_factor = rope.attention_factor(o["ropeAttentionFactor"].as<double>());
  c.rope.ggml = rope.ggml();
  std::unique_ptr<posenc::KvCache> made;
  const posenc::Status s = rope.status().ok() ? posenc::KvCache::create(c, &made) : rope.status();
  val result = val::array();
  result.call<void>("push", message(s), static_cast<double>(reinterpret_cast<Ptr>(made.release())));
  return result;
}

void kv_cache_delete(Ptr h) { delete cache(h); }

std::string kv_cache_append(Ptr h, Ptr k, Ptr v, double n, Ptr positions) {
  return message(cache(h)->append(at<const float>(k), at<const float>(v), static_cast<std::size_t>(n),
                                  at<const double>(positions)));
}

// attend()'s options from the JS layer's normalized object o (js/kv_cache.js), without the
// tensors: each left out (or null) when not given keeps KvAttendOptions' default.
posenc::KvAttendOptions attend_options(const val& o) {
  posenc::KvAttendOptions a;
  read_if(o, "nHeads", &a.n_heads);
  read_if(o, "causal", &a.causal);
  read_if(o, "scale", &a.scale);
  read_if(o, "softcap", &a.softcap);
  return a;
}

// The core's checks of attend's options (KvCache::attend_check) for q_len queries, before the JS
// layer allocates anything: o as attend_options reads it, with the caller's arrays themselves
// (sinks: Float32Array of n_heads logits; positions: Float64Array of q_len) when given.
std::string kv_cache_attend_check(Ptr h, double q_len, const val& o) {
  posenc::KvAttendOptions a = attend_options(o);
  std::vector<float> sinks;
  std::vector<double> positions;
  if (const val s = o["sinks"]; !s.isUndefined() && !s.isNull()) {
    sinks = emscripten::convertJSArrayToNumberVector<float>(s);
    sinks.resize(a.n_heads);  // the JS layer holds it to n_heads entries
    a.sinks = sinks.data();
  }
  if (const val p = o["positions"]; !p.isUndefined() && !p.isNull()) {
    positions = emscripten::convertJSArrayToNumberVector<double>(p);
    positions.resize(static_cast<std::size_t>(q_len));
    a.positions = positions.data();
  }
  return message(cache(h)->attend_check(static_cast<std::size_t>(q_len), a));
}

// o: attend_options' object with the heap addresses (0 = none) of positions, sinks and the bias
// terms' tables (position_bias).
std::string kv_cache_attend(Ptr h, Ptr q, double q_len, const val& o, Ptr out) {
  posenc::KvAttendOptions a = attend_options(o);
  a.positions = at<const double>(o["positions"].as<Ptr>());
  static_cast<posenc::PositionBias&>(a) = posenc_js::position_bias(o);
  a.sinks = at<const float>(o["sinks"].as<Ptr>());
  return message(cache(h)->attend(at<const float>(q), static_cast<std::size_t>(q_len), a, at<float>(out)));
}

std::string kv_cache_shift(Ptr h, double delta, double keep) {
  return message(cache(h)->shift(static_cast<std::int64_t>(delta), static_cast<std::int64_t>(keep)));
}

void kv_cache_read(Ptr h, Ptr k, Ptr v, Ptr positions) {
  cache(h)->read(at<float>(k), at<float>(v), at<double>(positions));
}

double kv_cache_length(Ptr h) { return static_cast<double>(cache(h)->length()); }
double kv_cache_bytes(Ptr h) { return static_cast<double>(cache(h)->bytes()); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_kv_cache) {
  using emscripten::function;
  function("kvCacheCreate", &kv_cache_create);
  function("kvCacheCreateCheck", &kv_cache_create_check);
  function("kvCacheDelete", &kv_cache_delete);
  function("kvCacheAppend", &kv_cache_append);
  function("kvCacheAttend", &kv_cache_attend);
  function("kvCacheAttendCheck", &kv_cache_attend_check);
  function("kvCacheShift", &kv_cache_shift);
  function("kvCacheRead", &kv_cache_read);
  function("kvCacheLength", &kv_cache_length);
  function("kvCacheBytes", &kv_cache_bytes);
}
