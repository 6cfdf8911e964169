// The float16 → float32 kernels (kernels/half.cpp) on every SIMD target this CPU runs, bit for bit
// against the scalar half::to_float (cpp/src/half.hpp): all 65536 patterns (±0, subnormals,
// normals, ±inf, NaNs with their payloads), every tail length and misaligned pointers; nothing
// written outside the output. Then float16 K / V through attention with such values.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "half.hpp"
#include "helpers.hpp"
#include "kernels/table.hpp"
#include "posenc/posenc.hpp"
#include "subsets.hpp"

namespace {

using posenc::kernels::KernelTable;
using posenc::kernels::kKeyBlock;

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A NaN no widening makes (its low 13 mantissa bits are not zero): marks floats left unwritten.
const float kSentinel = from_bits(0x7fc0beefu);

// Every target built in that this CPU runs (the dispatch's choice among them is tested elsewhere).
std::vector<const KernelTable*> supported_targets() {
  posenc::kernels::KernelTarget t[8];
  const std::size_t n = posenc::kernels::kernel_targets(t, 8);
  std::vector<const KernelTable*> out;
  for (std::size_t i = 0; i < n && i < 8; ++i)
    if (t[i].supported) out.push_back(t[i].table);
  REQUIRE(!out.empty());
  return out;
}

// The first index where got and want differ in bits, or -1.
long first_difference(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (bits(got[i]) != bits(want[i])) return static_cast<long>(i);
  return -1;
}

std::string describe(const std::vector<float>& got, const std::vector<float>& want, long at) {
  if (at < 0) return "";
  const auto i = static_cast<std::size_t>(at);
  return "at " + std::to_string(i) + ": got bits " + std::to_string(bits(got[i])) + ", want " +
         std::to_string(bits(want[i]));
}

// Float16 patterns for the tail cases: the edge classes first, then a spread of the rest.
std::vector<std::uint16_t> mixed_patterns(std::size_t n, unsigned seed) {
  static const std::uint16_t edges[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x3c00,
                                        0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7c01, 0xfc01, 0x7e00, 0x7fff, 0xffff};
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i < sizeof(edges) / sizeof(edges[0]) ? edges[(i + seed) % (sizeof(edges) / sizeof(edges[0]))]
                                                : static_cast<std::uint16_t>(rng());
  return v;
}

}  // namespace

TEST_CASE("widen_half: all 65536 float16 patterns widen bitwise as half::to_float, every target, offset and tail") {
  // all[i] = i mod 2^16, so any 65536 consecutive entries hold every pattern once.
  std::vector<std::uint16_t> all(65536 + 16);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  for (const KernelTable* t : supported_targets()) {
    CAPTURE(std::string(t->arch));
    // src[0, n) widened into dst_off … of a sentinel-filled buffer: bitwise half::to_float, nothing
    // written outside.
    auto check = [&](const std::uint16_t* src, std::size_t n, std::size_t dst_off) {
      std::vector<float> got(dst_off + n + 16, kSentinel), want = got;
      for (std::size_t i = 0; i < n; ++i) want[dst_off + i] = posenc::half::to_float(src[i]);
      t->widen_half(got.data() + dst_off, src, n);
      const long at = first_difference(got, want);
      CHECK_MESSAGE(at == -1, describe(got, want, at));
    };
    for (const std::size_t src_off : {0, 1, 2, 3, 5, 7}) {
      for (const std::size_t dst_off : {0, 1, 3}) {
        CAPTURE(src_off);
        CAPTURE(dst_off);
        check(all.data() + src_off, 65536, dst_off);
      }
    }
    // Every length up to a few vectors (AVX-512: 2N = 32 halves a step), misaligned both sides.
    for (std::size_t n = 0; n <= 70; ++n) {
      for (const std::size_t off : {0, 1, 3}) {
        const auto src = mixed_patterns(off + n, static_cast<unsigned>(n));
        CAPTURE(n);
        CAPTURE(off);
        check(src.data() + off, n, off);
      }
    }
  }
}

TEST_CASE("widen_transpose_keys: transpose_keys' panels of the widened keys, bitwise, every pattern and tail") {
  // The panels of n keys of d values, key j at k + j * k_stride: what transpose_keys makes from
  // the keys widened by half::to_float. Columns past n stay as they were (the sentinel).
  auto check = [](const KernelTable* t, const std::uint16_t* k, std::size_t k_stride, std::size_t n, std::size_t d) {
    const std::size_t panels = (n + kKeyBlock - 1) / kKeyBlock;
    std::vector<float> wide(n * d), want(panels * d * kKeyBlock, kSentinel), got = want;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t e = 0; e < d; ++e) wide[j * d + e] = posenc::half::to_float(k[j * k_stride + e]);
    t->transpose_keys(want.data(), wide.data(), d, n, d);
    t->widen_transpose_keys(got.data(), k, k_stride, n, d);
    return describe(got, want, first_difference(got, want));  // empty: the same bits everywhere
  };
  for (const KernelTable* t : supported_targets()) {
    CAPTURE(std::string(t->arch));
    {  // 1024 keys × 64 dims = every pattern once, at an odd (2-byte) address
      std::vector<std::uint16_t> k(1 + 1024 * 64);
      for (std::size_t i = 0; i < 1024 * 64; ++i) k[1 + i] = static_cast<std::uint16_t>(i);
      const std::string diff = check(t, k.data() + 1, 64, 1024, 64);
      CHECK_MESSAGE(diff.empty(), diff);
    }
    for (const std::size_t d : {1, 2, 3, 5, 8, 13, 16, 17, 31, 32, 33, 64, 65, 100}) {
      std::vector<std::size_t> lengths = {63, 64, 65, 127, 128, 129};  // and 1 … 34 (AVX-512: N = 16 keys a step)
      for (std::size_t n = 1; n <= 34; ++n) lengths.push_back(n);
      for (const std::size_t n : lengths) {
        for (const std::size_t pad : {0, 3}) {
          const std::size_t k_stride = d + pad;
          const auto k = mixed_patterns(1 + n * k_stride, static_cast<unsigned>(d * 1000 + n));
          CAPTURE(d);
          CAPTURE(n);
          CAPTURE(k_stride);
          const std::string diff = check(t, k.data() + 1, k_stride, n, d);
          CHECK_MESSAGE(diff.empty(), diff);
        }
      }
    }
  }
}

TEST_CASE("attention: float16 K/V with zeros, subnormals and the largest halves equal float32 on their values" *
          kKernels) {
  // Finite float16 patterns of every class; the float32 call gets their exact values.
  std::mt19937 rng(11);
  auto halves = [&](std::size_t n, std::vector<std::uint16_t>* h, std::vector<float>* f) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t b;
      do b = static_cast<std::uint16_t>(rng());
      while (((b >> 10) & 0x1f) == 0x1f);
      if (i % 7 == 0) b &= 0x83ff;  // subnormal or ±0
      h->push_back(b);
      f->push_back(posenc::half::to_float(b));
    }
  };
  for (const std::size_t D : {13, 64}) {
    const std::size_t H = 4, Hkv = 2, T = 150;
    std::vector<std::uint16_t> k16, v16;
    std::vector<float> k, v;
    halves(T * Hkv * D, &k16, &k);
    halves(T * Hkv * D, &v16, &v);
    const auto q = posenc::test::random_floats(T * H * D, 12, 1e-3f);  // scores stay moderate next to 65504
    for (const bool heads_major : {false, true}) {
      for (const bool weights : {false, true}) {
        posenc::AttentionOptions o;
        o.n_heads = H;
        o.n_kv_heads = Hkv;
        o.head_dim = D;
        o.causal = true;
        o.heads_major = heads_major;
        std::vector<float> a(q.size()), b(q.size()), wa(H * T * T), wb(H * T * T);
        REQUIRE(posenc::attention(q.data(), k.data(), v.data(), T, T, o, a.data(), weights ? wa.data() : nullptr).ok());
        o.kv_dtype = posenc::DType::kFloat16;
        REQUIRE(
            posenc::attention(q.data(), k16.data(), v16.data(), T, T, o, b.data(), weights ? wb.data() : nullptr).ok());
        CAPTURE(D);
        CAPTURE(heads_major);
        CAPTURE(weights);
        CHECK(first_difference(b, a) == -1);
        CHECK(first_difference(wb, wa) == -1);
      }
    }
  }
}
