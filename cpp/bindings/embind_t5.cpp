// T5's adapters (js/t5.js): buckets and biases; and its parts of readModel's result and of the
// attention options (SchemePart, embind_options.hpp).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;
using posenc_js::query_offset;

posenc::T5BucketParams t5_params(bool bidirectional, int num_buckets, int max_distance) {
  return {bidirectional, num_buckets, max_distance};
}

// The bucket settings' rules (t5_check), which the JS layer asks before it allocates.
std::string t5_check(bool bidirectional, int num_buckets, int max_distance) {
  return message(posenc::t5_check(t5_params(bidirectional, num_buckets, max_distance)));
}

// Writes out[n] = bucket(rel[n]) (rel as float64 holding integers).
std::string t5_buckets(Ptr out, Ptr rel, double n, bool bidirectional, int num_buckets, int max_distance) {
  const auto p = t5_params(bidirectional, num_buckets, max_distance);
  if (const auto s = posenc::t5_check(p); !s.ok()) return message(s);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    at<std::int32_t>(out)[i] = posenc::t5_bucket(static_cast<std::int64_t>(at<const double>(rel)[i]), p);
  return {};
}

std::string t5_bias(Ptr bias, Ptr table, double n_heads, double q_len, double k_len, bool bidirectional,
                    int num_buckets, int max_distance, double q_offset) {
  return message(posenc::t5_bias(at<float>(bias), at<const float>(table), static_cast<std::size_t>(n_heads),
                                 static_cast<std::size_t>(q_len), static_cast<std::size_t>(k_len),
                                 t5_params(bidirectional, num_buckets, max_distance), query_offset(q_offset)));
}

// readModel's `t5`; attention's t5Table (an address, 0 = off) and, when on, t5Bidirectional,
// t5NumBuckets and t5MaxDistance (js/t5.js's term writes them).
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
      if (b.t5_table)
        b.t5 = {o["t5Bidirectional"].as<bool>(), o["t5NumBuckets"].as<int>(), o["t5MaxDistance"].as<int>()};
    },
});

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_t5) {
  using emscripten::function;
  function("t5Check", &t5_check);
  function("t5Buckets", &t5_buckets);
  function("t5Bias", &t5_bias);
}
