// The lab's random numbers: SplitMix64 (Steele, Lea & Flood 2014) and Box–Muller normals. Written
// out rather than std::mt19937 + std:: distributions, whose outputs differ between standard
// libraries: the same seed gives the same data and weights natively and in WebAssembly.
#pragma once

#include <cmath>
#include <cstdint>

namespace posenc::lab::detail {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // [0, n) for n < 2^32: the high 32 bits times n (Lemire's multiply-shift; bias < n / 2^32).
  std::uint32_t below(std::uint32_t n) noexcept { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
  // N(0, 1): one Box–Muller value per call (the sine partner is dropped to keep the stream simple).
  double normal() noexcept {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace posenc::lab::detail
