// The lab's kernels split over the pool (parallel.hpp): rows [i0, i1) of c = rows [i0, i1) of A
// times B, GELU of elements [e0, e1) — one kernel call per block.
#include "lab/parallel.hpp"

namespace posenc::lab::detail {

constexpr std::size_t kGemmTileRows = 4;  // lab_matmul.cpp's register tile

void gemm(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs, const float* b,
          std::size_t ldb, std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept {
  const auto& K = kernels::lab_kernel_table();
  parallel_blocks(m, kGemmTileRows, n * k, [&](std::size_t i0, std::size_t i1) {
    K.gemm(c + i0 * ldc, ldc, a + i0 * a_rs, a_rs, a_cs, b, ldb, i1 - i0, n, k, accumulate);
  });
}

void gelu(float* y, const float* x, std::size_t n) noexcept {
  const auto& K = kernels::lab_kernel_table();
  parallel_blocks(n, kElementBlock, 16, [&](std::size_t e0, std::size_t e1) { K.gelu(y + e0, x + e0, e1 - e0); });
}

void gelu_backward(float* dx, const float* dy, const float* x, std::size_t n) noexcept {
  const auto& K = kernels::lab_kernel_table();
  parallel_blocks(n, kElementBlock, 16,
                  [&](std::size_t e0, std::size_t e1) { K.gelu_backward(dx + e0, dy + e0, x + e0, e1 - e0); });
}

}  // namespace posenc::lab::detail
