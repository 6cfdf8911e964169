// The extrapolation lab's kernels (cpp/src/lab/), one table per SIMD target like table.hpp's, and
// picked to match it: lab_kernel_table() is the table of kernel_table()'s target.
#pragma once

#include <cstddef>

namespace posenc::kernels {

struct LabKernelTable {
  const char* arch;
  // c[i][j] (+)= Σ_p A(i, p) b[p][j],  A(i, p) = a[i * a_rs + p * a_cs],  i < m, j < n, p < k.
  // Row strides ldb, ldc. a_cs = 1 is x·W; a_rs = 1 is Xᵀ·dY (a weight gradient).
  void (*gemm)(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs,
               const float* b, std::size_t ldb, std::size_t m, std::size_t n, std::size_t k,
               bool accumulate) noexcept;
  // c[i][j] (+)= Σ_p a[i][p] b[j][p]  (A·Bᵀ with both row-major: scores, dY·Wᵀ).
  void (*gemm_nt)(float* c, std::size_t ldc, const float* a, std::size_t lda, const float* b,
                  std::size_t ldb, std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept;
  // s[n] → softmax(s) in place; returns log Σ exp s[j].
  float (*softmax)(float* s, std::size_t n) noexcept;
  // ds[j] = p[j] (dp[j] - Σ_i p[i] dp[i]).
  void (*softmax_backward)(float* ds, const float* p, const float* dp, std::size_t n) noexcept;
  // Per row r < rows of x[rows][d]: y = (x - mean) rstd w + b, rstd = 1/sqrt(var + eps).
  void (*layernorm)(float* y, float* mean, float* rstd, const float* x, const float* w, const float* b,
                    std::size_t rows, std::size_t d, float eps) noexcept;
  // dx += ∂/∂x, dw += Σ_r dy x̂, db += Σ_r dy  (x̂ = (x - mean) rstd).
  void (*layernorm_backward)(float* dx, float* dw, float* db, const float* dy, const float* x,
                             const float* mean, const float* rstd, const float* w, std::size_t rows,
                             std::size_t d) noexcept;
  // y = GELU(x), tanh form; dx = dy GELU'(x).
  void (*gelu)(float* y, const float* x, std::size_t n) noexcept;
  void (*gelu_backward)(float* dx, const float* dy, const float* x, std::size_t n) noexcept;
  // Half-split RoPE on rows r < rows (x + r * row_stride, n_heads heads of head_dim) with the
  // tables cos[r][head_dim/2], sin[r][head_dim/2]; transpose applies Rᵀ (the backward pass).
  void (*rope)(float* x, std::size_t rows, std::size_t row_stride, std::size_t n_heads,
               std::size_t head_dim, const float* cos, const float* sin, bool transpose) noexcept;
};

const LabKernelTable& lab_kernel_table() noexcept;

}  // namespace posenc::kernels
