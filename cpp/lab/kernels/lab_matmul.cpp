/* The lab's matrix products (cpp/lab/forward.cpp): every linear layer, its two gradients,
   and attention's Q·Kᵀ, P·V and their gradients are one of these two forms.

   gemm:     c[i][j] (+)= Σ_p A(i, p) b[p][j]     A(i, p) = a[i a_rs + p a_cs]
             b and c row-major (strides ldb, ldc), so j runs along SIMD lanes. A strided A covers
             both X·W (a_rs = K, a_cs = 1) and Xᵀ·dY (a_rs = 1, a_cs = M) with no transposed copy.
             Register tile: 4 rows × 4 vectors of j, the k loop innermost (each b load serves 4
             rows, each broadcast of A serves 4 vectors: 16 independent fma chains); then 4 × 2,
             4 × 1 and 1-row tiles, and a scalar tail of columns. Whatever the tile, c[i][j] is one
             fma chain over p = 0 … k − 1 in order, so the tiles never change a bit.
   gemm_nt:  c[i][j] (+)= Σ_p a[i][p] b[j][p]     (A·Bᵀ, both row-major, p along SIMD lanes)
             two rows of a against 4 rows of b at a time, 8 accumulators (each load of b serves
             both rows, and 8 independent chains of fma keep the units busy), then reduce_add4;
             a last odd row and the columns past a multiple of 4 as dot4 and dot (kernels/dot.hpp,
             which attention's dot_keys shares). Every c[i][j] is the same sum as dot4's — its
             lanes' fma chains over p, the same reduction tree, then the scalar tail of p — so
             the pairing of rows changes no bit.
   Float32 with fused multiply-add where the target has it; the summation order is fixed, so a
   result is the same on every run on one target. */

#include "lab/kernels/lab_table.hpp"
#include "kernels/target.hpp"
#include "kernels/dot.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {
namespace {

// A tile of up to 4 rows (R) × 4 vectors (V) of c at (i, j). The accumulators are named scalars of
// batch type rather than an array, so they stay in registers (an array is kept on the stack, and
// under AddressSanitizer every access to it is instrumented).
template <std::size_t R, std::size_t V>
void gemm_tile(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs, const float* b,
               std::size_t ldb, std::size_t k, bool accumulate) {
  static_assert((R == 1 || R == 4) && (V == 1 || V == 2 || V == 4), "tiles are 1 or 4 rows by 1, 2 or 4 vectors");
  const auto init = [&](std::size_t r, std::size_t v) {
    return accumulate && r < R && v < V ? batch::load_unaligned(c + r * ldc + v * N) : batch(0.0f);
  };
  batch c00 = init(0, 0), c01 = init(0, 1), c02 = init(0, 2), c03 = init(0, 3);
  batch c10 = init(1, 0), c11 = init(1, 1), c12 = init(1, 2), c13 = init(1, 3);
  batch c20 = init(2, 0), c21 = init(2, 1), c22 = init(2, 2), c23 = init(2, 3);
  batch c30 = init(3, 0), c31 = init(3, 1), c32 = init(3, 2), c33 = init(3, 3);
  for (std::size_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    const float* ap = a + p * a_cs;
    const batch b0 = batch::load_unaligned(bp);
    const batch b1 = V >= 2 ? batch::load_unaligned(bp + N) : batch(0.0f);
    const batch b2 = V == 4 ? batch::load_unaligned(bp + 2 * N) : batch(0.0f);
    const batch b3 = V == 4 ? batch::load_unaligned(bp + 3 * N) : batch(0.0f);
    const auto row = [&](const batch& x, batch& y0, batch& y1, batch& y2, batch& y3) {
      y0 = xsimd::fma(x, b0, y0);
      if (V >= 2) y1 = xsimd::fma(x, b1, y1);
      if (V == 4) y2 = xsimd::fma(x, b2, y2), y3 = xsimd::fma(x, b3, y3);
    };
    row(batch(ap[0]), c00, c01, c02, c03);
    if (R == 4) {
      row(batch(ap[a_rs]), c10, c11, c12, c13);
      row(batch(ap[2 * a_rs]), c20, c21, c22, c23);
      row(batch(ap[3 * a_rs]), c30, c31, c32, c33);
    }
  }
  const auto put = [&](float* ci, const batch& y0, const batch& y1, const batch& y2, const batch& y3) {
    y0.store_unaligned(ci);
    if (V >= 2) y1.store_unaligned(ci + N);
    if (V == 4) y2.store_unaligned(ci + 2 * N), y3.store_unaligned(ci + 3 * N);
  };
  put(c, c00, c01, c02, c03);
  if (R == 4) {
    put(c + ldc, c10, c11, c12, c13);
    put(c + 2 * ldc, c20, c21, c22, c23);
    put(c + 3 * ldc, c30, c31, c32, c33);
  }
}

// dot4 of two rows of a (a0, a1) against the same 4 rows of b: each result as dot4's.
void dot2x4(const float* a0, const float* a1, const float* b, std::size_t stride, std::size_t d, Dot4& r0, Dot4& r1) {
  const float *b0 = b, *b1 = b0 + stride, *b2 = b1 + stride, *b3 = b2 + stride;
  const std::size_t d_vec = d - d % N;
  batch s00(0.0f), s01(0.0f), s02(0.0f), s03(0.0f), s10(0.0f), s11(0.0f), s12(0.0f), s13(0.0f);
  for (std::size_t i = 0; i < d_vec; i += N) {
    const batch x0 = batch::load_unaligned(a0 + i), x1 = batch::load_unaligned(a1 + i);
    const batch y0 = batch::load_unaligned(b0 + i), y1 = batch::load_unaligned(b1 + i);
    const batch y2 = batch::load_unaligned(b2 + i), y3 = batch::load_unaligned(b3 + i);
    s00 = xsimd::fma(x0, y0, s00);
    s01 = xsimd::fma(x0, y1, s01);
    s02 = xsimd::fma(x0, y2, s02);
    s03 = xsimd::fma(x0, y3, s03);
    s10 = xsimd::fma(x1, y0, s10);
    s11 = xsimd::fma(x1, y1, s11);
    s12 = xsimd::fma(x1, y2, s12);
    s13 = xsimd::fma(x1, y3, s13);
  }
  r0 = reduce_add4(s00, s01, s02, s03);
  r1 = reduce_add4(s10, s11, s12, s13);
  for (std::size_t i = d_vec; i < d; ++i) {
    r0.r0 += a0[i] * b0[i];
    r0.r1 += a0[i] * b1[i];
    r0.r2 += a0[i] * b2[i];
    r0.r3 += a0[i] * b3[i];
  }
  for (std::size_t i = d_vec; i < d; ++i) {
    r1.r0 += a1[i] * b0[i];
    r1.r1 += a1[i] * b1[i];
    r1.r2 += a1[i] * b2[i];
    r1.r3 += a1[i] * b3[i];
  }
}

void put4(float* c, const Dot4& r, bool accumulate) {
  if (accumulate) {
    c[0] += r.r0;
    c[1] += r.r1;
    c[2] += r.r2;
    c[3] += r.r3;
  } else {
    c[0] = r.r0;
    c[1] = r.r1;
    c[2] = r.r2;
    c[3] = r.r3;
  }
}

// Row i of c: columns j ≥ j0 (in groups of 4 from j0, then one at a time) by dot4 and dot.
void gemm_nt_row(float* ci, const float* ai, const float* b, std::size_t ldb, std::size_t j0, std::size_t n,
                 std::size_t k, bool accumulate) {
  std::size_t j = j0;
  for (; j + 4 <= n; j += 4) put4(ci + j, dot4(ai, b + j * ldb, ldb, k), accumulate);
  for (; j < n; ++j) {
    const float r = dot(ai, b + j * ldb, k);
    ci[j] = accumulate ? ci[j] + r : r;
  }
}

}  // namespace

void lab_gemm(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs, const float* b,
              std::size_t ldb, std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept {
  std::size_t j = 0;
  for (; j + 4 * N <= n; j += 4 * N) {
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4)
      gemm_tile<4, 4>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
    for (; i < m; ++i) gemm_tile<1, 4>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
  }
  for (; j + 2 * N <= n; j += 2 * N) {
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4)
      gemm_tile<4, 2>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
    for (; i < m; ++i) gemm_tile<1, 2>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
  }
  for (; j + N <= n; j += N) {
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4)
      gemm_tile<4, 1>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
    for (; i < m; ++i) gemm_tile<1, 1>(c + i * ldc + j, ldc, a + i * a_rs, a_rs, a_cs, b + j, ldb, k, accumulate);
  }
  if (j == n) return;
  for (std::size_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    for (std::size_t jj = j; jj < n; ++jj) {
      float s = accumulate ? ci[jj] : 0.0f;
      for (std::size_t p = 0; p < k; ++p) s += a[i * a_rs + p * a_cs] * b[p * ldb + jj];
      ci[jj] = s;
    }
  }
}

void lab_gemm_nt(float* c, std::size_t ldc, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                 std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept {
  std::size_t i = 0;
  for (; i + 2 <= m; i += 2) {
    const float *a0 = a + i * lda, *a1 = a0 + lda;
    float *c0 = c + i * ldc, *c1 = c0 + ldc;
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      Dot4 r0, r1;
      dot2x4(a0, a1, b + j * ldb, ldb, k, r0, r1);
      put4(c0 + j, r0, accumulate);
      put4(c1 + j, r1, accumulate);
    }
    gemm_nt_row(c0, a0, b, ldb, j, n, k, accumulate);
    gemm_nt_row(c1, a1, b, ldb, j, n, k, accumulate);
  }
  if (i < m) gemm_nt_row(c + i * ldc, a + i * lda, b, ldb, 0, n, k, accumulate);
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
