// Internal: a probe for the test suite's subsets. Every lookup of a kernel table (the library's
// and the lab's) and every use of the thread pool (parallel_for, its size read or set) marks it;
// the doctest main clears it before each case and reads it after, so that a case whose results may
// depend on the SIMD target or the thread count, and that is not in the test suite "kernels" (the
// cases run again on every target and on two threads), fails the run instead of silently being
// checked on one target and one thread count only.
//
// Read-mostly: once marked, mark() is one relaxed load, so it costs nothing next to a kernel call
// and no two threads write the same cache line over and over.
#pragma once

#include <atomic>

namespace posenc::probe {

extern std::atomic<bool> g_marked;

inline void mark() noexcept {
  if (!g_marked.load(std::memory_order_relaxed)) g_marked.store(true, std::memory_order_relaxed);
}

// Whether anything was marked since the last take(); clears the mark.
inline bool take() noexcept { return g_marked.exchange(false, std::memory_order_relaxed); }

}  // namespace posenc::probe
