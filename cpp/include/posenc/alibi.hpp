// posenc: ALiBi, attention with linear biases (Press et al. 2022, "Train Short, Test Long").
#pragma once

#include <cstddef>
#include <optional>

#include "posenc/status.hpp"

namespace posenc {

// The rule of max_bias, which alibi_slopes and alibi_bias run first (and the JS layer before it
// allocates): kBadArgument unless it is finite and > 0.
Status alibi_check(double max_bias) noexcept;

// slopes[n_heads], as BLOOM, MPT and ggml compute them: with c = 2^floor(log2 n_heads),
//   head h <  c:  2^(-max_bias (h + 1) / c)
//   head h >= c:  2^(-max_bias (2 (h - c) + 1) / (2 c))      (the odd steps of the 2c-head series)
// e.g. n_heads = 12, max_bias = 8: 2^-1 … 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
// Status: kBadArgument if n_heads is 0 or max_bias is not finite and > 0 (alibi_check).
Status alibi_slopes(float* slopes, std::size_t n_heads, double max_bias = 8.0) noexcept;

// bias[n_heads][q_len][k_len] = -slope_h * (qpos_i - j), query i at key position
// qpos_i = query_offset + i; by default the queries sit at the last q_len key positions
// (query_offset = k_len - q_len, as in decoding with a cache; then q_len must be <= k_len).
// causal: -inf for j > qpos_i; otherwise the symmetric -slope_h * |qpos_i - j| of bidirectional
// ALiBi encoders.
Status alibi_bias(float* bias, std::size_t n_heads, std::size_t q_len, std::size_t k_len, bool causal,
                  double max_bias = 8.0, std::optional<std::size_t> query_offset = std::nullopt) noexcept;

}  // namespace posenc
