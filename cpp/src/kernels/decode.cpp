/* Decode scores: a few query rows against a run of row-major keys (the KV cache's layout), each
   key read once for all the rows.

   scores_rows:  s[r][j] = scale * Σ_d q_r[d] k_j[d]      r < kAttentionRows, j < n
                 k_j = k + j * d (one kv head's keys, contiguous), s[r][j] at s + r * ld_s + j.
                 Two keys × kAttentionRows rows per step: 8 SIMD accumulators over d, so each key
                 vector loaded serves every row and each query vector two keys; then one
                 horizontal sum per accumulator. (dot_keys, one row at a time, reads the keys once
                 per row; scores_tile needs Kᵀ panels, a transpose per call that a decode step,
                 which reads each key once, cannot amortise.)
   Float32 throughout; the tails of d and an odd last key go element by element. */

#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

void scores_rows(float* s, std::size_t ld_s, const float* const* q, const float* k, std::size_t n,
                 std::size_t d) noexcept {
  static_assert(kAttentionRows == 4, "the micro-kernel below is written for 4 rows");
  const std::size_t d_vec = d - d % N;
  const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
  std::size_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const float* ka = k + j * d;
    const float* kb = ka + d;
    batch a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f), b0(0.0f), b1(0.0f), b2(0.0f), b3(0.0f);
    for (std::size_t i = 0; i < d_vec; i += N) {
      const batch x = batch::load_unaligned(ka + i), y = batch::load_unaligned(kb + i);
      const batch u0 = batch::load_unaligned(q0 + i), u1 = batch::load_unaligned(q1 + i);
      a0 = xsimd::fma(u0, x, a0);
      b0 = xsimd::fma(u0, y, b0);
      a1 = xsimd::fma(u1, x, a1);
      b1 = xsimd::fma(u1, y, b1);
      const batch u2 = batch::load_unaligned(q2 + i), u3 = batch::load_unaligned(q3 + i);
      a2 = xsimd::fma(u2, x, a2);
      b2 = xsimd::fma(u2, y, b2);
      a3 = xsimd::fma(u3, x, a3);
      b3 = xsimd::fma(u3, y, b3);
    }
    float ra[4] = {xsimd::reduce_add(a0), xsimd::reduce_add(a1), xsimd::reduce_add(a2), xsimd::reduce_add(a3)};
    float rb[4] = {xsimd::reduce_add(b0), xsimd::reduce_add(b1), xsimd::reduce_add(b2), xsimd::reduce_add(b3)};
    for (std::size_t i = d_vec; i < d; ++i)
      for (std::size_t r = 0; r < 4; ++r) {
        ra[r] += q[r][i] * ka[i];
        rb[r] += q[r][i] * kb[i];
      }
    for (std::size_t r = 0; r < 4; ++r) {
      s[r * ld_s + j] = ra[r];
      s[r * ld_s + j + 1] = rb[r];
    }
  }
  for (; j < n; ++j) {
    const float* ka = k + j * d;
    for (std::size_t r = 0; r < 4; ++r) {
      batch a(0.0f);
      for (std::size_t i = 0; i < d_vec; i += N)
        a = xsimd::fma(batch::load_unaligned(q[r] + i), batch::load_unaligned(ka + i), a);
      float t = xsimd::reduce_add(a);
      for (std::size_t i = d_vec; i < d; ++i) t += q[r][i] * ka[i];
      s[r * ld_s + j] = t;
    }
  }
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
