// posenc: the sinusoidal position table of Vaswani et al. 2017, "Attention Is All You Need", §3.5.
#pragma once

#include <cstddef>

#include "posenc/status.hpp"

namespace posenc {

struct SinusoidalParams {
  double base = 10000.0;  // the 10000 of the paper; must be finite and > 0
};

// Writes out[seq_len][d_model] (row-major, positions pos = 0 … seq_len-1):
//   out[pos][2i]   = sin(pos / base^(2i / d_model))
//   out[pos][2i+1] = cos(pos / base^(2i / d_model))
// An odd d_model ends with the sin column of the last frequency (the formula, column by column).
// Angles are formed in float64 and reduced mod 2π before the float32 sin/cos, so the error does
// not grow with pos (<= 4e-7 absolute against float64 at any pos).
// Status: kBadArgument if seq_len or d_model is 0 or base is not finite and > 0;
//         kTooLarge if seq_len * d_model overflows size_t. Never throws.
Status sinusoidal(float* out, std::size_t seq_len, std::size_t d_model,
                  const SinusoidalParams& params = {}) noexcept;

}  // namespace posenc
