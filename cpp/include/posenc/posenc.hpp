// posenc: positional encodings and attention. One include for the whole public API.
// Public headers take plain pointers and extents; no SIMD types appear here.
#pragma once

#include <cstddef>

#include "posenc/alibi.hpp"
#include "posenc/attention.hpp"
#include "posenc/kv_cache.hpp"
#include "posenc/learned.hpp"
#include "posenc/model_file.hpp"
#include "posenc/onnx.hpp"
#include "posenc/rope.hpp"
#include "posenc/rope_config.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/status.hpp"
#include "posenc/t5.hpp"
#include "posenc/threads.hpp"

namespace posenc {

// The SIMD instruction set of the kernels in use: "wasm" in the WebAssembly build; natively the
// best this CPU runs of the targets built in ("sse2", "sse4.2", "fma3+avx2", "avx512f"), chosen
// once at run time ($POSENC_SIMD=name forces one that the CPU supports).
const char* simd_arch() noexcept;

struct SimdTarget {
  const char* name;  // as simd_arch() names it
  bool supported;    // this CPU runs it
};

// The SIMD targets built into this library, best last: writes up to max of them, returns how many.
std::size_t simd_targets(SimdTarget* out, std::size_t max) noexcept;

}  // namespace posenc
