#include "posenc/alibi.hpp"

#include <cmath>
#include <limits>

#include "bias_extents.hpp"

namespace posenc {

Status alibi_check(double max_bias) noexcept {
  if (!(std::isfinite(max_bias) && max_bias > 0.0))
    return {StatusCode::kBadArgument, "max_bias must be finite and > 0"};
  return Status::Ok();
}

namespace {

// 2^(-max_bias (h+1) / c) for h < c, else 2^(-max_bias (2 (h - c) + 1) / (2c)); c = 2^floor(log2 n).
float slope(std::size_t h, std::size_t n_heads, double max_bias) {
  const double c = std::exp2(std::floor(std::log2(static_cast<double>(n_heads))));
  const double k = static_cast<double>(h);
  const double e = k < c ? max_bias * (k + 1.0) / c : max_bias * (2.0 * (k - c) + 1.0) / (2.0 * c);
  return static_cast<float>(std::exp2(-e));
}

}  // namespace

Status alibi_slopes(float* slopes, std::size_t n_heads, double max_bias) noexcept {
  if (n_heads == 0) return {StatusCode::kBadArgument, "n_heads must be > 0"};
  if (Status s = alibi_check(max_bias); !s.ok()) return s;
  if (slopes == nullptr) return {StatusCode::kBadArgument, "slopes must not be null"};
  for (std::size_t h = 0; h < n_heads; ++h) slopes[h] = slope(h, n_heads, max_bias);
  return Status::Ok();
}

Status alibi_bias(float* bias, std::size_t n_heads, std::size_t q_len, std::size_t k_len, bool causal, double max_bias,
                  std::optional<std::size_t> query_offset) noexcept {
  if (Status s = check_bias_extents(n_heads, q_len, k_len, &query_offset); !s.ok()) return s;
  if (Status s = alibi_check(max_bias); !s.ok()) return s;
  if (bias == nullptr) return {StatusCode::kBadArgument, "bias must not be null"};
  for (std::size_t h = 0; h < n_heads; ++h) {
    const float m = slope(h, n_heads, max_bias);
    for (std::size_t i = 0; i < q_len; ++i) {
      const double qpos = static_cast<double>(*query_offset) + static_cast<double>(i);
      float* row = bias + (h * q_len + i) * k_len;
      for (std::size_t j = 0; j < k_len; ++j) {
        const double d = qpos - static_cast<double>(j);
        row[j] = causal && d < 0 ? -std::numeric_limits<float>::infinity() : -m * static_cast<float>(std::fabs(d));
      }
    }
  }
  return Status::Ok();
}

}  // namespace posenc
