/* Dot products shared by the attention kernels (dot_keys) and the lab's A·Bᵀ (lab_gemm_nt).

   dot:  Σ_i a[i] b[i]                               one SIMD accumulator, reduce_add, scalar tail
   dot4: r_t = Σ_i a[i] b_t[i],  b_t = b + t*stride,  t < 4
         four accumulators, so each load of a serves four rows of b; reduce_add, scalar tail.
   Float32 with fused multiply-add where the target has it; the summation order is fixed.
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
  Dot4 r{xsimd::reduce_add(s0), xsimd::reduce_add(s1), xsimd::reduce_add(s2), xsimd::reduce_add(s3)};
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
