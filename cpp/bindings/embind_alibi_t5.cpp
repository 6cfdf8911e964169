// ALiBi's and T5's adapters (js/alibi_t5.js): slopes, biases and buckets.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

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

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_alibi_t5) {
  using emscripten::function;
  function("alibiSlopes", &alibi_slopes);
  function("alibiBias", &alibi_bias);
  function("t5Buckets", &t5_buckets);
  function("t5Bias", &t5_bias);
}
