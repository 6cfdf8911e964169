// The lab's loops over posenc's pool (set_num_threads, cpp/src/thread_pool.hpp): one model's
// forward and backward passes on every thread, with the bits of one thread.
//
// Every split here hands each output element to exactly one task, which computes it with the same
// kernel call, in the same order, as the single-threaded pass: the matrix products by blocks of
// output rows (c[i][·] reads only row i of A, so a block of rows is bitwise the rows of the whole
// call; blocks are multiples of gemm's 4-row register tile, so even the tiles are the same), row-wise
// kernels (LayerNorm, softmax, RoPE) by rows, element-wise ones (GELU) by blocks of 64 elements, a
// multiple of every target's lanes, so the scalar tail stays the last block's. Nothing is summed
// across tasks. Tasks never allocate or throw.
#pragma once

#include <algorithm>
#include <cstddef>

#include "lab/kernels/lab_table.hpp"
#include "thread_pool.hpp"

namespace posenc::lab::detail {

// Multiply-adds (or element operations) a task should have at least, so that handing it to another
// thread costs little next to it.
constexpr std::size_t kTaskWork = std::size_t{1} << 15;
// Element-wise kernels split at multiples of this (≥ and a multiple of every target's lanes).
constexpr std::size_t kElementBlock = 64;

// Calls fn(task, worker) for every task < n_tasks on up to n_workers threads of the pool
// (worker < n_workers indexes per-worker scratch allocated before the call).
template <class F>
void parallel_tasks(std::size_t n_tasks, std::size_t n_workers, F&& fn) noexcept {
  pool::parallel_for(n_tasks, n_workers, fn);
}

// Calls fn(begin, end) over [0, n) in blocks of a multiple of `align` (the last block takes the
// rest), blocks of about 4 per worker and at least kTaskWork / work_per_item items; inline when
// the pool has one thread or the work is too small to split.
template <class F>
void parallel_blocks(std::size_t n, std::size_t align, std::size_t work_per_item, F&& fn) noexcept {
  const std::size_t workers = pool::pool_workers();
  const std::size_t min_items = kTaskWork / std::max<std::size_t>(work_per_item, 1) + 1;
  std::size_t block = std::max((n + 4 * workers - 1) / (4 * workers), min_items);
  block = (block + align - 1) / align * align;
  if (workers <= 1 || block >= n) {
    if (n > 0) fn(std::size_t{0}, n);
    return;
  }
  const std::size_t n_tasks = (n + block - 1) / block;
  pool::parallel_for(n_tasks, workers, [&](std::size_t t, std::size_t) {
    fn(t * block, std::min(n, (t + 1) * block));
  });
}

// The lab kernels of lab_kernels.inc with the same arguments, split over the pool: gemm and
// gemm_nt by blocks of rows of c, layernorm by rows, gelu and gelu_backward by element blocks.
// (layernorm_backward sums its weight gradients over the rows and stays on one thread.)
void gemm(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs, const float* b,
          std::size_t ldb, std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept;
void gemm_nt(float* c, std::size_t ldc, const float* a, std::size_t lda, const float* b, std::size_t ldb,
             std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept;
void layernorm(float* y, float* mean, float* rstd, const float* x, const float* w, const float* b, std::size_t rows,
               std::size_t d, float eps) noexcept;
void gelu(float* y, const float* x, std::size_t n) noexcept;
void gelu_backward(float* dx, const float* dy, const float* x, std::size_t n) noexcept;

}  // namespace posenc::lab::detail
