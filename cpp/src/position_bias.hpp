// Internal: the positional bias terms (posenc::PositionBias, attention.hpp) — their rule, and their
// terms added to attention scores for both callers: the attention engine (a run of keys at
// consecutive positions) and KvCache::attend (keys at the positions the cache holds). A new bias
// term is its field in PositionBias and its rule and term here.
//   ALiBi: s -= slope_h · |qpos − kpos|          T5: s += table[bucket(kpos − qpos)][h]
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "posenc/attention.hpp"

namespace posenc::position_bias {

inline bool any(const PositionBias& b) { return b.alibi_slopes || b.t5_table; }

// kBadArgument unless every ALiBi slope is finite and the T5 bucket parameters are valid (with a
// table): the rule of attention() and KvCache::attend alike.
inline Status check(const PositionBias& b, std::size_t n_heads) noexcept {
  if (b.alibi_slopes)
    for (std::size_t h = 0; h < n_heads; ++h)
      if (!std::isfinite(b.alibi_slopes[h])) return {StatusCode::kBadArgument, "alibi slopes must be finite"};
  if (b.t5_table) return t5_check(b.t5);
  return Status::Ok();
}

// s[j] += the terms of head h (of n_heads) for a query at qpos and the key at first_key + j, j < n.
inline void add_run(const PositionBias& b, std::size_t n_heads, std::size_t h, std::int64_t qpos,
                    std::int64_t first_key, std::size_t n, float* s) {
  if (b.alibi_slopes) {
    // In float (distances are exact integers below 2^24): a loop the compiler vectorizes — with a
    // 32-bit signed index, whose conversion to float SSE2 and SIMD128 have as one instruction (a
    // size_t's had none natively, and the loop stayed scalar).
    const float slope = b.alibi_slopes[h];
    const auto first = static_cast<float>(qpos - first_key);
    const auto count = static_cast<std::int32_t>(n);  // a block of keys, or one row of scores: < 2^31
    for (std::int32_t j = 0; j < count; ++j) s[j] -= slope * std::fabs(first - static_cast<float>(j));
  }
  if (b.t5_table) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto rel = first_key + static_cast<std::int64_t>(j) - qpos;
      s[j] += b.t5_table[static_cast<std::size_t>(t5_bucket(rel, b.t5)) * n_heads + h];
    }
  }
}

// s[j] += the terms of head h (of n_heads) for a query at qpos and the key at key_pos[j], j < n
// (positions: integers held as doubles, below 2^53).
inline void add_at(const PositionBias& b, std::size_t n_heads, std::size_t h, double qpos, const double* key_pos,
                   std::size_t n, float* s) {
  if (b.alibi_slopes) {
    const float slope = b.alibi_slopes[h];
    for (std::size_t j = 0; j < n; ++j) s[j] -= slope * static_cast<float>(std::fabs(qpos - key_pos[j]));
  }
  if (b.t5_table) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto rel = static_cast<std::int64_t>(key_pos[j]) - static_cast<std::int64_t>(qpos);
      s[j] += b.t5_table[static_cast<std::size_t>(t5_bucket(rel, b.t5)) * n_heads + h];
    }
  }
}

}  // namespace posenc::position_bias
