/* Attention building blocks: dot products of one query with a run of keys, and the online
   (streaming) softmax update of one output row.

   dot_keys:     s[j] = scale * Σ_d q[d] k_j[d]        k_j = k + j * k_stride, j < n
                 four keys at a time, each with its own SIMD accumulator over d, then reduce_add
   softmax_block: given a block of logits s[0 … n) and the row state (m, l, acc[dv]):
                 m' = max(m, max s);  p_j = exp(s_j - m');  l' = l e^(m - m') + Σ p_j
                 acc' = acc e^(m - m') + Σ_j p_j v_j      v_j = v + j * v_stride
                 -inf logits give p = 0; a block of only -inf leaves the state as it was.
   Float32 throughout; subtracting the running max keeps exp finite at any logit size. */
#include <xsimd/xsimd.hpp>

#include <cmath>
#include <limits>

#include "kernels/kernels.hpp"

namespace posenc::kernels {
namespace {

using batch = xsimd::batch<float>;
constexpr std::size_t N = batch::size;

float dot(const float* a, const float* b, std::size_t d) {
  batch acc(0.0f);
  std::size_t i = 0;
  for (; i + N <= d; i += N) acc = xsimd::fma(batch::load_unaligned(a + i), batch::load_unaligned(b + i), acc);
  float s = xsimd::reduce_add(acc);
  for (; i < d; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

void dot_keys(float* s, const float* q, const float* k, std::size_t k_stride, std::size_t n,
              std::size_t d, float scale) noexcept {
  std::size_t j = 0;
  const std::size_t d_vec = d - d % N;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + j * k_stride;
    const float* k1 = k0 + k_stride;
    const float* k2 = k1 + k_stride;
    const float* k3 = k2 + k_stride;
    batch a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
    for (std::size_t i = 0; i < d_vec; i += N) {
      const batch qv = batch::load_unaligned(q + i);
      a0 = xsimd::fma(qv, batch::load_unaligned(k0 + i), a0);
      a1 = xsimd::fma(qv, batch::load_unaligned(k1 + i), a1);
      a2 = xsimd::fma(qv, batch::load_unaligned(k2 + i), a2);
      a3 = xsimd::fma(qv, batch::load_unaligned(k3 + i), a3);
    }
    float r0 = xsimd::reduce_add(a0), r1 = xsimd::reduce_add(a1), r2 = xsimd::reduce_add(a2),
          r3 = xsimd::reduce_add(a3);
    for (std::size_t i = d_vec; i < d; ++i) {
      r0 += q[i] * k0[i];
      r1 += q[i] * k1[i];
      r2 += q[i] * k2[i];
      r3 += q[i] * k3[i];
    }
    s[j] = r0 * scale;
    s[j + 1] = r1 * scale;
    s[j + 2] = r2 * scale;
    s[j + 3] = r3 * scale;
  }
  for (; j < n; ++j) s[j] = dot(q, k + j * k_stride, d) * scale;
}

void softmax_block(float* s, std::size_t n, const float* v, std::size_t v_stride, std::size_t dv,
                   float* m, float* l, float* acc) noexcept {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float block_max = kNegInf;
  for (std::size_t j = 0; j < n; ++j) block_max = std::fmax(block_max, s[j]);
  if (block_max == kNegInf) return;
  const float m_new = std::fmax(*m, block_max);
  const float alpha = *m == kNegInf ? 0.0f : std::exp(*m - m_new);

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
    s[j] = s[j] == kNegInf ? 0.0f : std::exp(s[j] - m_new);
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

}  // namespace posenc::kernels
