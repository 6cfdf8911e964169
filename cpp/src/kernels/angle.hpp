// Angle reduction shared by the kernels that take sin/cos of pos * inv_freq.
#pragma once

#include <cmath>

// static: each SIMD target's copy of the kernels gets its own (see target.hpp).
namespace posenc::kernels {

// pos * inv_freq reduced to [-π, π] in float64, then rounded once to float32. Float64 keeps the
// product exact to ~1e-16 relative, so the reduced angle is good to float32 rounding (<= 2e-7 rad)
// for any pos below 2^32; a float32 product would already be ~6e-2 rad off at pos = 2^20.
static inline float reduced_angle(double pos, double inv_freq) noexcept {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  constexpr double kInvTwoPi = 0.15915494309189533576888376337251;
  const double a = pos * inv_freq;
  return static_cast<float>(a - ::nearbyint(a * kInvTwoPi) * kTwoPi);
}

}  // namespace posenc::kernels
