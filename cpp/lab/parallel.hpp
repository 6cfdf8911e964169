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

// [0, n) cut into blocks of a multiple of `align` items (the last block takes the rest): about 4
// per worker, each of at least kTaskWork / work_per_item items; one block when the pool has one
// thread or the work is too small to split. Where the cuts fall never changes a result (each item
// is computed on its own), only how the work is shared.
struct Blocks {
  std::size_t n = 0, block = 1, tasks = 0;
  Blocks(std::size_t n_items, std::size_t align, std::size_t work_per_item) noexcept : n(n_items) {
    const std::size_t workers = pool::pool_workers();
    const std::size_t min_items = kTaskWork / std::max<std::size_t>(work_per_item, 1) + 1;
    block = std::max((n + 4 * workers - 1) / (4 * workers), min_items);
    block = (block + align - 1) / align * align;
    if (workers <= 1 || block >= n) block = std::max<std::size_t>(n, 1);
    tasks = n == 0 ? 0 : (n + block - 1) / block;
  }
  std::size_t begin(std::size_t task) const noexcept { return task * block; }
  std::size_t end(std::size_t task) const noexcept { return std::min(n, (task + 1) * block); }
};

// Calls fn(begin, end) for every block of Blocks(n, align, work_per_item), over the pool.
template <class F>
void parallel_blocks(std::size_t n, std::size_t align, std::size_t work_per_item, F&& fn) noexcept {
  const Blocks b(n, align, work_per_item);
  parallel_tasks(b.tasks, pool::pool_workers(), [&](std::size_t t, std::size_t) { fn(b.begin(t), b.end(t)); });
}

// Two independent block loops as one hand-over to the pool: fa over a's blocks, fb over b's.
template <class FA, class FB>
void parallel_blocks(const Blocks& a, FA&& fa, const Blocks& b, FB&& fb) noexcept {
  parallel_tasks(a.tasks + b.tasks, pool::pool_workers(), [&](std::size_t t, std::size_t) {
    if (t < a.tasks) fa(a.begin(t), a.end(t));
    else fb(b.begin(t - a.tasks), b.end(t - a.tasks));
  });
}

// The lab kernels of lab_kernels.inc with the same arguments, split over the pool: gemm by blocks
// of rows of c, gelu and gelu_backward by element blocks. (forward.cpp splits its other products
// itself, to hand several to the pool at once; layernorm_backward sums its weight gradients over
// the rows and stays on one thread.)
void gemm(float* c, std::size_t ldc, const float* a, std::size_t a_rs, std::size_t a_cs, const float* b,
          std::size_t ldb, std::size_t m, std::size_t n, std::size_t k, bool accumulate) noexcept;
void gelu(float* y, const float* x, std::size_t n) noexcept;
void gelu_backward(float* dx, const float* dy, const float* x, std::size_t n) noexcept;

}  // namespace posenc::lab::detail
