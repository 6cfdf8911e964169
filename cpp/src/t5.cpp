#include "posenc/t5.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bias_extents.hpp"

namespace posenc {

Status t5_check(const T5BucketParams& p) noexcept {
  if (p.bidirectional ? p.num_buckets < 4 : p.num_buckets < 2)
    return {StatusCode::kBadArgument, "num_buckets must be >= 4 when bidirectional, else >= 2"};
  const int max_exact = (p.bidirectional ? p.num_buckets / 2 : p.num_buckets) / 2;
  if (p.max_distance <= max_exact)
    return {StatusCode::kBadArgument,
            "max_distance must be > the exact range (num_buckets / 2, halved again when bidirectional)"};
  return Status::Ok();
}

int t5_bucket(std::int64_t relative_position, const T5BucketParams& p) noexcept {
  int n = p.num_buckets;
  int bucket = 0;
  std::int64_t d = relative_position;
  if (p.bidirectional) {
    n /= 2;
    if (d > 0) bucket += n;
    d = d < 0 ? -d : d;
  } else {
    d = d < 0 ? -d : 0;  // -min(d, 0): only keys before the query are told apart
  }
  const int max_exact = n / 2;
  if (d < max_exact) return bucket + static_cast<int>(d);
  // The same float32 operations as torch: log(d.float() / max_exact) / log(max_distance / max_exact)
  // * (n - max_exact), truncated. Float64 here would move some bucket edges by one.
  const float ratio = static_cast<float>(d) / static_cast<float>(max_exact);
  const auto log_span = static_cast<float>(std::log(static_cast<double>(p.max_distance) / max_exact));
  const float scaled = std::log(ratio) / log_span * static_cast<float>(n - max_exact);
  const std::int64_t large = max_exact + static_cast<std::int64_t>(scaled);
  return bucket + static_cast<int>(std::min<std::int64_t>(large, n - 1));
}

Status t5_bias(float* bias, const float* table, std::size_t n_heads, std::size_t q_len, std::size_t k_len,
               const T5BucketParams& p, std::optional<std::size_t> query_offset) noexcept {
  if (Status s = t5_check(p); !s.ok()) return s;
  if (Status s = check_bias_extents(n_heads, q_len, k_len, &query_offset); !s.ok()) return s;
  if (bias == nullptr || table == nullptr) return {StatusCode::kBadArgument, "bias and table must not be null"};
  for (std::size_t i = 0; i < q_len; ++i) {
    const auto qpos = static_cast<std::int64_t>(*query_offset + i);
    for (std::size_t j = 0; j < k_len; ++j) {
      const int b = t5_bucket(static_cast<std::int64_t>(j) - qpos, p);
      for (std::size_t h = 0; h < n_heads; ++h)
        bias[(h * q_len + i) * k_len + j] = table[static_cast<std::size_t>(b) * n_heads + h];
    }
  }
  return Status::Ok();
}

}  // namespace posenc
