// Internal: the checks alibi_bias and t5_bias share — a [n_heads][q_len][k_len] result, and where
// the queries sit (query_offset; by default the last q_len key positions).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>

#include "posenc/status.hpp"

namespace posenc {

inline Status check_bias_extents(std::size_t n_heads, std::size_t q_len, std::size_t k_len,
                                 std::optional<std::size_t>* query_offset) {
  if (n_heads == 0) return {StatusCode::kBadArgument, "n_heads must be > 0"};
  if (q_len == 0) return {StatusCode::kBadArgument, "q_len must be > 0"};
  if (k_len == 0) return {StatusCode::kBadArgument, "k_len must be > 0"};
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (q_len > max / n_heads || k_len > max / (n_heads * q_len))
    return {StatusCode::kTooLarge, "n_heads * q_len * k_len overflows"};
  if (!*query_offset) {
    if (q_len > k_len)
      return {StatusCode::kBadArgument,
              "q_len must be <= k_len when the queries sit at the last key positions (pass query_offset)"};
    *query_offset = k_len - q_len;
  } else if (**query_offset > (std::size_t{1} << 52) || q_len > (std::size_t{1} << 52)) {
    return {StatusCode::kBadArgument, "query_offset + q_len must be < 2^52"};
  }
  return Status::Ok();
}

}  // namespace posenc
