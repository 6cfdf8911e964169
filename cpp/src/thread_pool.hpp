// The pool behind set_num_threads (posenc/threads.hpp), for the library's own loops.
//
// parallel_for(n_tasks, n_workers, fn) calls fn(task, worker) once for every task in
// [0, n_tasks) and returns when all have run. Tasks are handed out one at a time from an atomic
// counter (dynamic scheduling); the caller takes tasks too, as worker 0. `worker` is below
// n_workers, so a caller that sizes per-worker scratch as n_workers × (one worker's share) before
// the call may index it by worker; pool_workers() is the count to size for. The pool's own threads
// never allocate: scratch is the caller's to allocate, before the call.
//
// Runs everything inline on the caller (worker 0, no synchronisation) when n_tasks <= 1,
// n_workers <= 1, the pool has one thread, or the pool is busy: another thread's parallel_for is
// using it, this is a nested call from inside a task, or set_num_threads is changing it.
// Tasks must not throw (kernels return a Status; keep the first failure in a slot of your own).
#pragma once

#include <cstddef>
#include <type_traits>

namespace posenc::pool {

using TaskFn = void (*)(void* context, std::size_t task, std::size_t worker);

// How many workers a parallel_for started now may use: num_threads().
std::size_t pool_workers() noexcept;

void parallel_for_fn(std::size_t n_tasks, std::size_t n_workers, TaskFn fn, void* context) noexcept;

// Row-wise loops (RoPE) give each task about this many bytes: enough that waking a worker is
// cheap next to the work, small enough that a few hundred KB inputs still split in two.
constexpr std::size_t kTaskBytes = std::size_t{256} << 10;

// Rows per task for rows of row_bytes bytes (at least 1).
inline std::size_t rows_per_task(std::size_t row_bytes) noexcept {
  return row_bytes >= kTaskBytes ? 1 : kTaskBytes / (row_bytes == 0 ? 1 : row_bytes);
}

template <class F>
void parallel_for(std::size_t n_tasks, std::size_t n_workers, F&& fn) noexcept {
  using Fn = std::remove_reference_t<F>;
  parallel_for_fn(
      n_tasks, n_workers, [](void* c, std::size_t task, std::size_t worker) { (*static_cast<Fn*>(c))(task, worker); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace posenc::pool
