// Internal: IEEE 754 binary16 ↔ binary32, exact one way and round-to-nearest-even the other
// (infinities, NaN and subnormals kept), for float16 model files and ONNX tensors.
#pragma once

#include <cstdint>
#include <cstring>

namespace posenc::half {

inline float to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline std::uint16_t from_float(float f) noexcept {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf, NaN (quiet, payload's top bits kept)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {               // subnormal or zero in half: round abs * 2^24 to an integer, ties to even
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14 … 24
    const std::uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    return static_cast<std::uint16_t>(sign | (q + (rem > halfway || (rem == halfway && (q & 1u)) ? 1u : 0u)));
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even (a carry may bump the exponent).
  const std::uint32_t rebased = abs - 0x38000000u;  // exponent bias 127 → 15
  const std::uint32_t q = rebased >> 13, rem = rebased & 0x1fffu;
  return static_cast<std::uint16_t>(sign | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)) ? 1u : 0u)));
}

}  // namespace posenc::half
