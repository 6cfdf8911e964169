// Reads fuzzer bytes as a stream of small values; past the end it yields zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

struct FuzzInput {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;

  std::uint8_t byte() { return at < size ? data[at++] : 0; }
  // An integer in [lo, hi].
  std::size_t range(std::size_t lo, std::size_t hi) { return lo + byte() % (hi - lo + 1); }
  bool flag() { return byte() & 1; }
  // A float32 from 4 bytes, any bit pattern (NaN, inf, denormals included).
  float any_float() {
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits = (bits << 8) | byte();
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  // A finite float in [-scale, scale].
  float finite(float scale = 4.0f) { return (static_cast<float>(byte()) / 127.5f - 1.0f) * scale; }
};
