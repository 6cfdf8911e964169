// posenc: the native thread pool that attention and RoPE split their rows over.
#pragma once

#include "posenc/status.hpp"

namespace posenc {

// Runs the library's kernels on n_threads threads: n_threads - 1 workers plus the calling thread.
// The default is 1 (no thread is created; everything runs on the caller). Results are bitwise the
// same for every n_threads: each output row is computed by one thread, in the same order.
// Changing the count joins the old workers (after the running call, if any, ends). A call made
// while another thread's call is using the workers (or from inside one) runs on its caller alone.
// Returns kBadArgument if n_threads is outside [1, 64], or > 1 in a build without threads
// (WebAssembly without -pthread); kUnavailable if the system refuses to create a thread, or, in
// the threaded WebAssembly build, if n_threads - 1 exceeds the Web Workers left in the pool
// Emscripten made at load (the npm package makes threads - 1 of them; a call from a worker thread
// sees none). The count then stays as it was. Never throws.
Status set_num_threads(int n_threads) noexcept;

// The current count (>= 1).
int num_threads() noexcept;

}  // namespace posenc
