/* Attention building blocks: dot products of one query with a run of keys, and the online
   (streaming) softmax update of one output row; and their tiled forms for kRows query rows at
   once, which the streaming path uses.

   dot_keys:     s[j] = scale * Σ_d q[d] k_j[d]        k_j = k + j * k_stride, j < n  (kernels/dot.hpp)
                 four keys at a time, each with its own SIMD accumulator over d, then reduce_add
   softmax_block: given a block of logits s[0 … n) and the row state (m, l, acc[dv]):
                 m' = max(m, max s);  p_j = exp(s_j - m');  l' = l e^(m - m') + Σ p_j
                 acc' = acc e^(m - m') + Σ_j p_j v_j      v_j = v + j * v_stride
                 -inf logits give p = 0; a block of only -inf leaves the state as it was.
   transpose_keys: panel[(j / kKeyBlock)][i][j % kKeyBlock] = k_j[i]: N × N blocks of keys × dims
                 transposed in registers (xsimd::transpose), the tails element by element.
   scores_tile:  s[r][j] = scale * Σ_d q_r[d] panel[d][j]      r < kRows, j < n <= kKeyBlock
                 panel = Kᵀ of one block of keys, [d][kKeyBlock] contiguous (16 KiB at d = 64, so
                 it stays in L1; one long Kᵀ with a power-of-two row stride thrashed the cache).
                 2N keys × kRows rows of accumulators per pass: each K load serves kRows queries,
                 and keys run along SIMD lanes, so no horizontal sums are needed.
   softmax_tile: softmax_block for kRows rows of a score tile, with the value rows loaded once for
                 all kRows accumulators (acc [kRows][dv]).
   Float32 throughout; subtracting the running max keeps exp finite at any logit size. */

#include <cmath>
#include <limits>

#include "kernels/table.hpp"
#include "kernels/target.hpp"
#include "kernels/dot.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

void dot_keys(float* s, const float* q, const float* k, std::size_t k_stride, std::size_t n, std::size_t d,
              float scale) noexcept {
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const Dot4 r = dot4(q, k + j * k_stride, k_stride, d);
    s[j] = r.r0 * scale;
    s[j + 1] = r.r1 * scale;
    s[j + 2] = r.r2 * scale;
    s[j + 3] = r.r3 * scale;
  }
  for (; j < n; ++j) s[j] = dot(q, k + j * k_stride, d) * scale;
}

void softmax_block(float* s, std::size_t n, const float* v, std::size_t v_stride, std::size_t dv, float* m, float* l,
                   float* acc) noexcept {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float block_max = kNegInf;
  for (std::size_t j = 0; j < n; ++j) block_max = __builtin_fmaxf(block_max, s[j]);
  if (block_max == kNegInf) return;
  const float m_new = __builtin_fmaxf(*m, block_max);
  const float alpha = *m == kNegInf ? 0.0f : ::expf(*m - m_new);

  batch sum_v(0.0f);
  std::size_t j = 0;
  const batch mv(m_new);
  for (; j + N <= n; j += N) {
    const batch p = xsimd::exp(batch::load_unaligned(s + j) - mv);
    p.store_unaligned(s + j);
    sum_v += p;
  }
  float sum = xsimd::reduce_add(sum_v);
  for (; j < n; ++j) {
    s[j] = s[j] == kNegInf ? 0.0f : ::expf(s[j] - m_new);
    sum += s[j];
  }
  *l = *l * alpha + sum;
  *m = m_new;

  const std::size_t dv_vec = dv - dv % N;
  if (alpha != 1.0f) {
    const batch av(alpha);
    std::size_t i = 0;
    for (; i < dv_vec; i += N) (batch::load_unaligned(acc + i) * av).store_unaligned(acc + i);
    for (; i < dv; ++i) acc[i] *= alpha;
  }
  for (j = 0; j < n; ++j) {
    const float p = s[j];
    if (p == 0.0f) continue;
    const float* vj = v + j * v_stride;
    const batch pv(p);
    std::size_t i = 0;
    for (; i < dv_vec; i += N)
      xsimd::fma(pv, batch::load_unaligned(vj + i), batch::load_unaligned(acc + i)).store_unaligned(acc + i);
    for (; i < dv; ++i) acc[i] += p * vj[i];
  }
}

void transpose_keys(float* panels, const float* k, std::size_t k_stride, std::size_t n, std::size_t d) noexcept {
  static_assert(kKeyBlock % N == 0, "a group of N keys lies in one panel");
  // N keys × N dims at a time, transposed in registers: N vector stores instead of N² scalar ones.
  const std::size_t n_vec = n - n % N, d_vec = d - d % N;
  for (std::size_t j0 = 0; j0 < n_vec; j0 += N) {
    float* panel = panels + (j0 / kKeyBlock) * d * kKeyBlock + j0 % kKeyBlock;
    for (std::size_t i = 0; i < d_vec; i += N) {
      batch t[N];
      for (std::size_t r = 0; r < N; ++r) t[r] = batch::load_unaligned(k + (j0 + r) * k_stride + i);
      xsimd::transpose(t, t + N);
      for (std::size_t r = 0; r < N; ++r) t[r].store_unaligned(panel + (i + r) * kKeyBlock);
    }
    for (std::size_t r = 0; r < N; ++r)
      for (std::size_t i = d_vec; i < d; ++i) panel[i * kKeyBlock + r] = k[(j0 + r) * k_stride + i];
  }
  for (std::size_t j = n_vec; j < n; ++j) {
    const float* kj = k + j * k_stride;
    float* panel = panels + (j / kKeyBlock) * d * kKeyBlock + j % kKeyBlock;
    for (std::size_t i = 0; i < d; ++i) panel[i * kKeyBlock] = kj[i];
  }
}

void scores_tile(float* s, std::size_t ld_s, const float* const* q, const float* panel, std::size_t n, std::size_t d,
                 float scale) noexcept {
  constexpr std::size_t ld = kKeyBlock;
  static_assert(kAttentionRows == 4, "the micro-kernel below is written for 4 rows");
  const batch sc(scale);
  std::size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    batch a00(0.0f), a01(0.0f), a10(0.0f), a11(0.0f), a20(0.0f), a21(0.0f), a30(0.0f), a31(0.0f);
    const float* col = panel + j;
    for (std::size_t i = 0; i < d; ++i) {
      const batch k0 = batch::load_unaligned(col + i * ld), k1 = batch::load_unaligned(col + i * ld + N);
      const batch q0(q[0][i]), q1(q[1][i]), q2(q[2][i]), q3(q[3][i]);
      a00 = xsimd::fma(q0, k0, a00);
      a01 = xsimd::fma(q0, k1, a01);
      a10 = xsimd::fma(q1, k0, a10);
      a11 = xsimd::fma(q1, k1, a11);
      a20 = xsimd::fma(q2, k0, a20);
      a21 = xsimd::fma(q2, k1, a21);
      a30 = xsimd::fma(q3, k0, a30);
      a31 = xsimd::fma(q3, k1, a31);
    }
    (a00 * sc).store_unaligned(s + j);
    (a01 * sc).store_unaligned(s + j + N);
    (a10 * sc).store_unaligned(s + ld_s + j);
    (a11 * sc).store_unaligned(s + ld_s + j + N);
    (a20 * sc).store_unaligned(s + 2 * ld_s + j);
    (a21 * sc).store_unaligned(s + 2 * ld_s + j + N);
    (a30 * sc).store_unaligned(s + 3 * ld_s + j);
    (a31 * sc).store_unaligned(s + 3 * ld_s + j + N);
  }
  for (; j < n; ++j) {
    float r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    for (std::size_t i = 0; i < d; ++i) {
      const float kv = panel[i * ld + j];
      r0 += q[0][i] * kv;
      r1 += q[1][i] * kv;
      r2 += q[2][i] * kv;
      r3 += q[3][i] * kv;
    }
    s[j] = r0 * scale;
    s[ld_s + j] = r1 * scale;
    s[2 * ld_s + j] = r2 * scale;
    s[3 * ld_s + j] = r3 * scale;
  }
}

void softmax_tile(float* s, std::size_t ld_s, std::size_t n, const float* v, std::size_t v_stride, std::size_t dv,
                  float* m, float* l, float* acc) noexcept {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // Per row: new running max, the rescale of what was accumulated, exp weights and their sum.
  const std::size_t n_vec = n - n % N;
  for (std::size_t r = 0; r < kAttentionRows; ++r) {
    float* sr = s + r * ld_s;
    batch max_v(kNegInf);
    for (std::size_t j = 0; j < n_vec; j += N) max_v = xsimd::max(max_v, batch::load_unaligned(sr + j));
    float block_max = xsimd::reduce_max(max_v);
    for (std::size_t j = n_vec; j < n; ++j) block_max = __builtin_fmaxf(block_max, sr[j]);
    if (block_max == kNegInf) {  // nothing visible in this block for this row
      for (std::size_t j = 0; j < n; ++j) sr[j] = 0.0f;
      continue;
    }
    const float m_new = __builtin_fmaxf(m[r], block_max);
    const float alpha = m[r] == kNegInf ? 0.0f : ::expf(m[r] - m_new);
    const batch mv(m_new);
    batch sum_v(0.0f);
    for (std::size_t j = 0; j < n_vec; j += N) {
      const batch p = xsimd::exp(batch::load_unaligned(sr + j) - mv);
      p.store_unaligned(sr + j);
      sum_v += p;
    }
    float sum = xsimd::reduce_add(sum_v);
    for (std::size_t j = n_vec; j < n; ++j) {
      sr[j] = sr[j] == kNegInf ? 0.0f : ::expf(sr[j] - m_new);
      sum += sr[j];
    }
    l[r] = l[r] * alpha + sum;
    m[r] = m_new;
    if (alpha != 1.0f) {
      float* ar = acc + r * dv;
      const batch av(alpha);
      std::size_t i = 0;
      for (; i + N <= dv; i += N) (batch::load_unaligned(ar + i) * av).store_unaligned(ar + i);
      for (; i < dv; ++i) ar[i] *= alpha;
    }
  }
  // acc[r] += Σ_j p[r][j] v_j, two vectors of dv at a time for all rows.
  std::size_t i = 0;
  for (; i + 2 * N <= dv; i += 2 * N) {
    batch c00 = batch::load_unaligned(acc + i), c01 = batch::load_unaligned(acc + i + N);
    batch c10 = batch::load_unaligned(acc + dv + i), c11 = batch::load_unaligned(acc + dv + i + N);
    batch c20 = batch::load_unaligned(acc + 2 * dv + i), c21 = batch::load_unaligned(acc + 2 * dv + i + N);
    batch c30 = batch::load_unaligned(acc + 3 * dv + i), c31 = batch::load_unaligned(acc + 3 * dv + i + N);
    for (std::size_t j = 0; j < n; ++j) {
      const float* vj = v + j * v_stride + i;
      const batch v0 = batch::load_unaligned(vj), v1 = batch::load_unaligned(vj + N);
      const batch p0(s[j]), p1(s[ld_s + j]), p2(s[2 * ld_s + j]), p3(s[3 * ld_s + j]);
      c00 = xsimd::fma(p0, v0, c00);
      c01 = xsimd::fma(p0, v1, c01);
      c10 = xsimd::fma(p1, v0, c10);
      c11 = xsimd::fma(p1, v1, c11);
      c20 = xsimd::fma(p2, v0, c20);
      c21 = xsimd::fma(p2, v1, c21);
      c30 = xsimd::fma(p3, v0, c30);
      c31 = xsimd::fma(p3, v1, c31);
    }
    c00.store_unaligned(acc + i);
    c01.store_unaligned(acc + i + N);
    c10.store_unaligned(acc + dv + i);
    c11.store_unaligned(acc + dv + i + N);
    c20.store_unaligned(acc + 2 * dv + i);
    c21.store_unaligned(acc + 2 * dv + i + N);
    c30.store_unaligned(acc + 3 * dv + i);
    c31.store_unaligned(acc + 3 * dv + i + N);
  }
  for (; i < dv; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const float vv = v[j * v_stride + i];
      for (std::size_t r = 0; r < kAttentionRows; ++r) acc[r * dv + i] += s[r * ld_s + j] * vv;
    }
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
