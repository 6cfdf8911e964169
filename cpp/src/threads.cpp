// The pool: n_threads - 1 std::threads that sleep on a condition variable between jobs.
//
// A job is (fn, context, n_tasks, n_workers) plus an atomic counter of the next task. The caller
// publishes it under `lock`, bumps `generation` and wakes every worker; each worker (and the
// caller) takes tasks from the counter until none is left, then the worker checks in by
// decrementing the atomic `active`. The caller spins until every worker has checked in (never a
// blocking wait: see run()), so no worker can still read a job whose context lives on the caller's
// stack. `dispatch` is held for the whole
// job (try_lock: a second user thread runs inline instead of waiting) and by set_num_threads
// while it starts or joins workers; a nested call, from inside a task, sees t_in_job and runs
// inline. Worker w (1 … n_threads-1) leaves its loop when w >= live; growing creates workers
// live … n-1, shrinking lowers live and joins them. Between jobs a worker first polls `posted` (the
// generation, readable without the lock) for kSpinMicros, yielding, and only then sleeps: callers
// such as the lab's training step post dozens of short jobs back to back, and a condition-variable
// wake-up costs a worker about as long as one of them.
//
// Without threads (Emscripten without -pthread) the pool is one thread and never starts any.
#include "thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "posenc/threads.hpp"
#include "work_probe.hpp"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define POSENC_NO_THREADS 1
#endif

#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten.h>
// Web Workers waiting in Emscripten's pool (-sPTHREAD_POOL_SIZE), as this thread's JS sees them
// (0 on a worker thread: the pool is the main thread's).
EM_JS(int, posenc_idle_web_workers, (), { return PThread.unusedWorkers.length; });
#endif

namespace posenc::pool {
namespace {

constexpr int kMaxThreads = 64;
constexpr int kSpinMicros = 200;  // how long an idle worker polls for the next job before sleeping

struct Job {
  TaskFn fn = nullptr;
  void* context = nullptr;
  std::size_t n_tasks = 0, n_workers = 0;
};

// True on the pool's workers, and on a caller while its job runs: a parallel_for made there (from
// inside a task) runs inline, never waiting on the pool it is part of.
thread_local bool t_in_job = false;

void drain(const Job& job, std::atomic<std::size_t>& next, std::size_t worker) {
  for (std::size_t t = next.fetch_add(1, std::memory_order_relaxed); t < job.n_tasks;
       t = next.fetch_add(1, std::memory_order_relaxed))
    job.fn(job.context, t, worker);
}

class Pool {
 public:
  ~Pool() { resize(1); }

  std::size_t size() const noexcept { return n_threads_.load(std::memory_order_relaxed); }

  Status set_size(std::size_t n) noexcept {
    std::lock_guard<std::mutex> hold(dispatch_);
    return resize(n);
  }

  // Runs the job on the workers; false (nothing run) if the pool is busy or has no workers.
  bool run(const Job& job) noexcept {
    std::unique_lock<std::mutex> hold(dispatch_, std::try_to_lock);
    if (!hold.owns_lock() || threads_.empty()) return false;
    {
      std::lock_guard<std::mutex> lk(lock_);
      job_ = job;
      next_.store(0, std::memory_order_relaxed);
      active_.store(threads_.size(), std::memory_order_relaxed);
      ++generation_;
      posted_.store(generation_, std::memory_order_release);
    }
    wake_.notify_all();
    t_in_job = true;
    drain(job, next_, 0);
    t_in_job = false;
    // Spin, not a condition-variable wait: a browser's main thread (the threaded WASM build) must
    // not block (Emscripten warns), and the wait is at most one task plus a worker's wake-up.
    while (active_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    return true;
  }

 private:
  void worker_main(std::size_t worker, std::uint64_t seen) {
    t_in_job = true;
    std::unique_lock<std::mutex> lk(lock_);
    for (;;) {
      if (worker < live_ && generation_ == seen) {
        lk.unlock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
        while (posted_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        lk.lock();
      }
      wake_.wait(lk, [&] { return worker >= live_ || generation_ != seen; });
      if (worker >= live_) return;
      seen = generation_;
      const Job job = job_;
      lk.unlock();
      if (worker < job.n_workers) drain(job, next_, worker);
      active_.fetch_sub(1, std::memory_order_release);  // checked in: the job is not read again
      lk.lock();
    }
  }

  // With dispatch_ held: no job is running.
  Status resize(std::size_t n) noexcept {
    const std::size_t old = threads_.size() + 1;
    if (n < old) {
      stop_from(n);
    } else if (n > old) {
#ifdef __EMSCRIPTEN_PTHREADS__
      // A thread starts on a Web Worker of the pool Emscripten made at load; beyond it, it could
      // not start while this thread waits, and a failed std::thread aborts (no C++ exceptions).
      if (n - old > static_cast<std::size_t>(posenc_idle_web_workers()))
        return {StatusCode::kUnavailable,
                "not enough Web Workers in the pool made at load (the thread count is unchanged)"};
#endif
      {
        std::lock_guard<std::mutex> lk(lock_);
        live_ = n;
      }
      try {
        threads_.reserve(n - 1);
        for (std::size_t w = old; w < n; ++w) threads_.emplace_back(&Pool::worker_main, this, w, generation_);
      } catch (const std::system_error&) {
        stop_from(old);
        return {StatusCode::kUnavailable, "could not create the threads (the thread count is unchanged)"};
      } catch (const std::bad_alloc&) {
        stop_from(old);
        return {StatusCode::kTooLarge, "no memory for the threads (the thread count is unchanged)"};
      }
    }
    n_threads_.store(n, std::memory_order_relaxed);
    return Status::Ok();
  }

  // Joins workers n … : they see worker >= live_ and return.
  void stop_from(std::size_t n) {
    {
      std::lock_guard<std::mutex> lk(lock_);
      live_ = n;
    }
    wake_.notify_all();
    for (std::size_t w = n; w <= threads_.size(); ++w) threads_[w - 1].join();
    threads_.resize(n - 1);
  }

  std::mutex dispatch_;
  std::mutex lock_;  // guards job_, generation_, live_
  std::condition_variable wake_;
  std::vector<std::thread> threads_;  // threads_[w - 1] is worker w
  Job job_;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> active_{0};  // workers still in the current job
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t> posted_{0};  // generation_, for the workers' polling
  std::size_t live_ = 1;
  std::atomic<std::size_t> n_threads_{1};
};

Pool& the_pool() {
  static Pool pool;
  return pool;
}

}  // namespace

std::size_t pool_workers() noexcept {
  probe::mark();  // what is sized by the thread count
  return the_pool().size();
}

void parallel_for_fn(std::size_t n_tasks, std::size_t n_workers, TaskFn fn, void* context) noexcept {
  if (n_tasks == 0) return;
  probe::mark();
  if (n_tasks > 1 && n_workers > 1 && !t_in_job && the_pool().size() > 1 &&
      the_pool().run({fn, context, n_tasks, n_workers}))
    return;
  for (std::size_t t = 0; t < n_tasks; ++t) fn(context, t, 0);
}

}  // namespace posenc::pool

namespace posenc {

Status set_num_threads(int n_threads) noexcept {
  probe::mark();  // starts or joins the pool's threads
  if (n_threads < 1 || n_threads > pool::kMaxThreads) return {StatusCode::kBadArgument, "n_threads must be in [1, 64]"};
#ifdef POSENC_NO_THREADS
  if (n_threads > 1)
    return {StatusCode::kBadArgument, "n_threads > 1 needs the threaded build (posenc was compiled without threads)"};
#endif
  return pool::the_pool().set_size(static_cast<std::size_t>(n_threads));
}

int num_threads() noexcept { return static_cast<int>(pool::pool_workers()); }

}  // namespace posenc
