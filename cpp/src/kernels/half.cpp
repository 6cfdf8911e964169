/* float16 (IEEE 754 binary16) → float32, exactly, N = batch<float>::size values per vector.

   h = s eeeee mmmmmmmmmm (sign, 5-bit exponent e, 10-bit mantissa m); em = h & 0x7fff. In the
   float32 bits b (sign 1, exponent 8, mantissa 23):
     0 < e < 31 (normal):     b = (em << 13) + (112 << 23)        exponent rebased 15 → 127
     e = 31 (inf, NaN):       b = (em << 13) + (224 << 23)        = 0x7f800000 | m << 13 (payload kept)
     e = 0 (zero, subnormal): value ±m · 2^-24: b = bits(float(m) · 2^-24), exact (m < 2^10 is exact
                              as a float, and scaling it by a power of two gives at least 2^-24, a
                              normal float); m = 0 gives +0. No denormal is read or made, so the
                              FPU's flush-to-zero / denormals-are-zero modes cannot change a result.
     then b |= (h & 0x8000) << 16.
   This is half::to_float (cpp/src/half.hpp) bit for bit, for all 65536 patterns (tests/native/test_half.cpp).

   Lanes are int32 with the half's 16 bits at the bottom; bits above them are ignored (only
   h & 0x7fff and h & 0x8000 are read), so a vector of 2N halves loaded as N int32 words w gives
   the even elements as widen(w) and the odd ones as widen(w >> 16) with no masking (little
   endian: word i holds elements 2i, 2i + 1).

   widen_half:           dst[i] = float(src[i]), i < n. 2N halves per step: widen(w), widen(w >> 16),
                         zip_lo / zip_hi back into order.
   widen_transpose_keys: transpose_keys (kernels/attention.cpp) of float16 keys, in one pass:
                         key j = k + j * k_stride, d values, goes to column j % kKeyBlock of panel
                         j / kKeyBlock, panels[(j / kKeyBlock) * d * kKeyBlock + i * kKeyBlock + j % kKeyBlock].
                         N keys × 2N dims per step: the N × N words of the N rows are transposed
                         (xsimd::transpose: in registers; AVX-512F's goes through the stack) so that
                         t_i holds word i of each key, then widen(t_i) is dim 2i and
                         widen(t_i >> 16) dim 2i + 1 for N consecutive keys: two contiguous stores.
                         kKeyBlock % N == 0, so a step never straddles two panels.
   Tails (n, d or the key count not a multiple of the step) go through small zero-padded stack
   buffers and the same vector code; nothing outside dst[0, n) or the n keys' columns is written.

   WebAssembly (widen_half only): SIMD128 loads 4 halves zero-extended to int32 lanes in one
   instruction, and its float multiply never flushes subnormals (no FTZ/DAZ modes exist), so a
   shorter form is exact there: t = ((h << 16) >>s 3) & 0x8fffffff puts the sign at bit 31 and em
   at bits 13 … 27; float(t) · 2^112 rebases the exponent (a subnormal half is a subnormal float
   that the multiply makes normal); e = 31 instead gets b = t | 0x7f800000 (payload kept). Same
   bits as above for all 65536 patterns (the same test), in about half the instructions.
   Plain loops, no std algorithms: nothing here may be an out-of-line function (see target.hpp). */

#include <cstdint>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {
namespace {

using ibatch = xsimd::batch<std::int32_t, Arch>;
using hbatch = xsimd::batch<std::uint16_t, Arch>;
static_assert(ibatch::size == N && hbatch::size == 2 * N, "2N halves fill the N int32 lanes");
static_assert(kKeyBlock % N == 0, "a group of N keys lies in one panel");

// Lanes of h: float16 bit patterns in the low 16 bits (see the comment above).
batch widen(const ibatch& h) {
  const ibatch em = h & ibatch(0x7fff);
  ibatch bits = (em << 13) + ibatch(112 << 23);
  bits = xsimd::select(em >= ibatch(0x7c00), bits + ibatch(112 << 23), bits);
  const ibatch sub = xsimd::bitwise_cast<std::int32_t>(xsimd::to_float(em) * batch(0x1p-24f));
  bits = xsimd::select(em < ibatch(0x400), sub, bits);
  return xsimd::bitwise_cast<float>(bits | ((h & ibatch(0x8000)) << 16));
}

// 2N halves as N int32 words.
ibatch load_words(const std::uint16_t* p) { return xsimd::bitwise_cast<std::int32_t>(hbatch::load_unaligned(p)); }

// dst[0, 2N) from src[0, 2N).
void widen_2n(float* dst, const std::uint16_t* src) {
  const ibatch w = load_words(src);
  const batch even = widen(w), odd = widen(w >> 16);
  xsimd::zip_lo(even, odd).store_unaligned(dst);
  xsimd::zip_hi(even, odd).store_unaligned(dst + N);
}

// Dims [i, i + 2N) of the N keys rows[r] into out (column 0 of the group at dim 0): rows are
// complete words here (or padded buffers); only `keys` columns and dims < d_end - i are stored.
void widen_transpose_step(float* out, const std::uint16_t* const* rows, std::size_t i, std::size_t keys,
                          std::size_t dims) {
  ibatch t[N];
  for (std::size_t r = 0; r < N; ++r) t[r] = load_words(rows[r] + i);
  xsimd::transpose(t, t + N);
  alignas(Arch::alignment()) float part[N];
  for (std::size_t w = 0; w < N && 2 * w < dims; ++w) {
    for (std::size_t odd = 0; odd < 2 && 2 * w + odd < dims; ++odd) {
      const batch v = widen(odd ? t[w] >> 16 : t[w]);
      float* col = out + (i + 2 * w + odd) * kKeyBlock;
      if (keys == N) {
        v.store_unaligned(col);
      } else {
        v.store_aligned(part);
        for (std::size_t r = 0; r < keys; ++r) col[r] = part[r];
      }
    }
  }
}

#if defined(__wasm_simd128__)
// 4 halves from src, widened (the WebAssembly form in the comment above).
v128_t widen4(const std::uint16_t* src) {
  const v128_t t = wasm_v128_and(wasm_i32x4_shr(wasm_i32x4_shl(wasm_u32x4_load16x4(src), 16), 3),
                                 wasm_i32x4_splat(static_cast<std::int32_t>(0x8fffffffu)));
  const v128_t f = wasm_f32x4_mul(t, wasm_f32x4_splat(0x1p112f));
  const v128_t special = wasm_i32x4_eq(wasm_v128_and(t, wasm_i32x4_splat(0x0f800000)), wasm_i32x4_splat(0x0f800000));
  return wasm_v128_bitselect(wasm_v128_or(t, wasm_i32x4_splat(0x7f800000)), f, special);
}
#endif

}  // namespace

void widen_half(float* dst, const std::uint16_t* src, std::size_t n) noexcept {
  std::size_t i = 0;
#if defined(__wasm_simd128__)
  for (; i + 8 <= n; i += 8) {
    wasm_v128_store(dst + i, widen4(src + i));
    wasm_v128_store(dst + i + 4, widen4(src + i + 4));
  }
#endif
  for (; i + 2 * N <= n; i += 2 * N) widen_2n(dst + i, src + i);
  if (i == n) return;
  std::uint16_t in[2 * N] = {};
  float out[2 * N];
  for (std::size_t e = i; e < n; ++e) in[e - i] = src[e];
  widen_2n(out, in);
  for (std::size_t e = i; e < n; ++e) dst[e] = out[e - i];
}

void widen_transpose_keys(float* panels, const std::uint16_t* k, std::size_t k_stride, std::size_t n,
                          std::size_t d) noexcept {
  const std::size_t d_vec = d - d % (2 * N);
  for (std::size_t j0 = 0; j0 < n; j0 += N) {
    const std::size_t keys = n - j0 < N ? n - j0 : N;
    float* out = panels + (j0 / kKeyBlock) * d * kKeyBlock + j0 % kKeyBlock;
    const std::uint16_t* rows[N];
    for (std::size_t r = 0; r < N; ++r)
      rows[r] = k + (j0 + (r < keys ? r : keys - 1)) * k_stride;  // spare rows repeat the last
    for (std::size_t i = 0; i < d_vec; i += 2 * N) widen_transpose_step(out, rows, i, keys, 2 * N);
    if (d_vec == d) continue;
    // The last d - d_vec dims of each row, zero-padded to 2N.
    std::uint16_t tail[N][2 * N] = {};
    const std::uint16_t* tail_rows[N];
    for (std::size_t r = 0; r < N; ++r) {
      for (std::size_t e = d_vec; e < d; ++e) tail[r][e - d_vec] = rows[r][e];
      tail_rows[r] = tail[r];
    }
    widen_transpose_step(out + d_vec * kKeyBlock, tail_rows, 0, keys, d - d_vec);
  }
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
