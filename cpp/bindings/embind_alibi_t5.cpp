// ALiBi's and T5's adapters (js/alibi_t5.js): slopes, biases and buckets; and their parts of
// readModel's result and of the attention options (SchemePart, embind_options.hpp).
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
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

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

// readModel's `alibi` and `t5`; attention's alibiSlopes, t5Table (addresses, 0 = none),
// t5Bidirectional, t5NumBuckets and t5MaxDistance (js/alibi_t5.js's terms write them).
const posenc_js::AddSchemePart kAlibi({
    [](const posenc::ModelInfo& m, val& out) {
      if (!m.alibi) return;
      val a = val::object();
      a.set("nHeads", m.alibi->n_heads);
      a.set("maxBias", m.alibi->max_bias);
      out.set("alibi", a);
    },
    [](const val& o, posenc::PositionBias& b) { b.alibi_slopes = at<const float>(o["alibiSlopes"].as<Ptr>()); },
});
const posenc_js::AddSchemePart kT5({
    [](const posenc::ModelInfo& m, val& out) {
      if (!m.t5) return;
      val t = val::object();
      t.set("nHeads", m.t5->n_heads);
      t.set("numBuckets", m.t5->num_buckets);
      t.set("maxDistance", m.t5->max_distance);
      t.set("bidirectional", m.t5->bidirectional);
      if (!m.t5->table.empty()) {
        t.set("name", m.t5->name);
        t.set("table", posenc_js::float_array(m.t5->table));
      }
      out.set("t5", t);
    },
    [](const val& o, posenc::PositionBias& b) {
      b.t5_table = at<const float>(o["t5Table"].as<Ptr>());
      b.t5 = {o["t5Bidirectional"].as<bool>(), o["t5NumBuckets"].as<int>(), o["t5MaxDistance"].as<int>()};
    },
});

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_alibi_t5) {
  using emscripten::function;
  function("alibiSlopes", &alibi_slopes);
  function("alibiBias", &alibi_bias);
  function("t5Buckets", &t5_buckets);
  function("t5Bias", &t5_bias);
}
