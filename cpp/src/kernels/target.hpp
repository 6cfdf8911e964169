// The SIMD target this translation unit's kernels are compiled for. CMake compiles the kernel
// sources once per target with POSENC_KERNEL_ID and the matching -m flags (x86-64: SSE2, SSE4.2,
// AVX2 + FMA, AVX-512F; elsewhere one baseline copy: WASM SIMD128 under Emscripten). Each copy
// lives in its own namespace, posenc::kernels::POSENC_KERNEL_NS, and kernels/dispatch.cpp picks
// one at run time. Kernel files therefore use only xsimd (always inlined) and extern libm calls:
// an inline function compiled with AVX flags could otherwise be chosen by the linker for all.
#pragma once

#include <xsimd/xsimd.hpp>

#if !defined(POSENC_KERNEL_ID) || POSENC_KERNEL_ID == 0
#define POSENC_KERNEL_NS baseline
namespace posenc::kernels::baseline {
using Arch = xsimd::default_arch;
}
#elif POSENC_KERNEL_ID == 1
#define POSENC_KERNEL_NS sse2
namespace posenc::kernels::sse2 {
using Arch = xsimd::sse2;
}
#elif POSENC_KERNEL_ID == 2
#define POSENC_KERNEL_NS sse4_2
namespace posenc::kernels::sse4_2 {
using Arch = xsimd::sse4_2;
}
#elif POSENC_KERNEL_ID == 3
#define POSENC_KERNEL_NS avx2
namespace posenc::kernels::avx2 {
using Arch = xsimd::fma3<xsimd::avx2>;
}
#elif POSENC_KERNEL_ID == 4
#define POSENC_KERNEL_NS avx512f
namespace posenc::kernels::avx512f {
using Arch = xsimd::avx512f;
}
#else
#error "unknown POSENC_KERNEL_ID"
#endif

namespace posenc::kernels::POSENC_KERNEL_NS {
// The float vector of this target, N lanes wide: what every kernel file computes in.
using batch = xsimd::batch<float, Arch>;
constexpr std::size_t N = batch::size;
}  // namespace posenc::kernels::POSENC_KERNEL_NS
