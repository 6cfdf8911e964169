// posenc: positional encodings and attention. One include for the whole public API.
// Public headers take plain pointers and extents; no SIMD types appear here.
#pragma once

#include "posenc/alibi.hpp"
#include "posenc/attention.hpp"
#include "posenc/config.hpp"
#include "posenc/learned.hpp"
#include "posenc/rope.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/status.hpp"
#include "posenc/t5.hpp"

namespace posenc {

// The SIMD instruction set the kernels were compiled for ("wasm", "sse2", "avx2", ...).
const char* simd_arch() noexcept;

}  // namespace posenc
