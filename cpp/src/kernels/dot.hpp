/* Dot products shared by the attention kernels (dot_keys) and the lab's A·Bᵀ (lab_gemm_nt).

   dot:  Σ_i a[i] b[i]                               one SIMD accumulator, reduce_add, scalar tail
   dot4: r_t = Σ_i a[i] b_t[i],  b_t = b + t*stride,  t < 4
         four accumulators, so each load of a serves four rows of b; reduce_add4, scalar tail.
   Float32 with fused multiply-add where the target has it; the summation order is fixed.

   reduce_add4: the four sums of dot4 at once, each with the pairing tree of xsimd's reduce_add on
   the target, so the bits of four reduce_add calls. AVX-512F (xsimd 13: 128-bit quarters
   (q0 + q1) + (q2 + q3), then hadd twice: (l0 + l1) + (l2 + l3)): two rounds of quarter shuffles
   add the quarters of all four at once, two in-lane swaps add the lanes. AVX2 (x + its swapped
   halves, then hadd twice): the halves of two vectors at once, then the hadds on the pairs. The
   other targets call reduce_add four times. Float addition is commutative, so only the pairing
   matters, not which operand is first.
   Include after kernels/target.hpp: each SIMD target's copy lives in its own namespace. */
#pragma once

#include <cstddef>

namespace posenc::kernels::POSENC_KERNEL_NS {
namespace {

struct Dot4 {
  float r0, r1, r2, r3;
};

inline float dot(const float* a, const float* b, std::size_t d) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t N = batch::size;
  batch acc(0.0f);
  std::size_t i = 0;
  for (; i + N <= d; i += N) acc = xsimd::fma(batch::load_unaligned(a + i), batch::load_unaligned(b + i), acc);
  float s = xsimd::reduce_add(acc);
  for (; i < d; ++i) s += a[i] * b[i];
  return s;
}

template <class B>
inline Dot4 reduce_add4(const B& s0, const B& s1, const B& s2, const B& s3) {
#if defined(POSENC_KERNEL_ID) && POSENC_KERNEL_ID == 4
  const __m512 a01 = _mm512_add_ps(_mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512 a23 = _mm512_add_ps(_mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(3, 1, 3, 1)));
  __m512 q = _mm512_add_ps(_mm512_shuffle_f32x4(a01, a23, _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_f32x4(a01, a23, _MM_SHUFFLE(3, 1, 3, 1)));  // quarter t: s_t's
  q = _mm512_add_ps(q, _mm512_permute_ps(q, _MM_SHUFFLE(2, 3, 0, 1)));                // l0 + l1, l2 + l3
  q = _mm512_add_ps(q, _mm512_permute_ps(q, _MM_SHUFFLE(1, 0, 3, 2)));                // their sum in lane 0
  alignas(16) float r[4];
  _mm_store_ps(r, _mm512_castps512_ps128(
                      _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), q)));
  return {r[0], r[1], r[2], r[3]};
#elif defined(POSENC_KERNEL_ID) && POSENC_KERNEL_ID == 3
  const __m256 h01 = _mm256_add_ps(_mm256_permute2f128_ps(s0, s1, 0x20), _mm256_permute2f128_ps(s0, s1, 0x31));
  const __m256 h23 = _mm256_add_ps(_mm256_permute2f128_ps(s2, s3, 0x20), _mm256_permute2f128_ps(s2, s3, 0x31));
  __m256 h = _mm256_hadd_ps(h01, h23);  // low half: s0's, s2's pairs; high half: s1's, s3's
  h = _mm256_hadd_ps(h, h);
  alignas(16) float r[4];
  _mm_store_ps(r, _mm_unpacklo_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  return {r[0], r[1], r[2], r[3]};
#else
  return {xsimd::reduce_add(s0), xsimd::reduce_add(s1), xsimd::reduce_add(s2), xsimd::reduce_add(s3)};
#endif
}

inline Dot4 dot4(const float* a, const float* b, std::size_t stride, std::size_t d) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t N = batch::size;
  const float* b0 = b;
  const float* b1 = b0 + stride;
  const float* b2 = b1 + stride;
  const float* b3 = b2 + stride;
  const std::size_t d_vec = d - d % N;
  batch s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
  for (std::size_t i = 0; i < d_vec; i += N) {
    const batch av = batch::load_unaligned(a + i);
    s0 = xsimd::fma(av, batch::load_unaligned(b0 + i), s0);
    s1 = xsimd::fma(av, batch::load_unaligned(b1 + i), s1);
    s2 = xsimd::fma(av, batch::load_unaligned(b2 + i), s2);
    s3 = xsimd::fma(av, batch::load_unaligned(b3 + i), s3);
  }
  Dot4 r = reduce_add4(s0, s1, s2, s3);
  for (std::size_t i = d_vec; i < d; ++i) {
    r.r0 += a[i] * b0[i];
    r.r1 += a[i] * b1[i];
    r.r2 += a[i] * b2[i];
    r.r3 += a[i] * b3[i];
  }
  return r;
}

}  // namespace
}  // namespace posenc::kernels::POSENC_KERNEL_NS
