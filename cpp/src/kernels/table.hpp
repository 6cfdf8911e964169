// The kernels of one SIMD target, as a table of function pointers (see target.hpp, dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/rope.hpp"

namespace posenc::kernels {

// Tiled attention: kAttentionRows query rows at a time against panels of Kᵀ: for each block of
// kKeyBlock keys, a contiguous [d][kKeyBlock] panel (transpose_keys writes ceil(n / kKeyBlock)).
constexpr std::size_t kAttentionRows = 4;
constexpr std::size_t kKeyBlock = 64;

// Precision::kGgml's angle parameters (posenc::GgmlRope, flattened; theta_scale precomputed).
struct GgmlAngles {
  float theta_scale, freq_scale, ext_factor, corr_low, corr_high, attn_factor;
  const float* freq_factors;  // [half] or null
};

struct KernelTable {
  const char* arch;  // xsimd's name: "sse2", "avx2", "wasm", ...
#define POSENC_KERNEL(name, ret, params) ret(*name) params noexcept;
#include "kernels/kernels.inc"
#undef POSENC_KERNEL
};

// The table of the best target this CPU runs (or the one $POSENC_SIMD names, for testing).
const KernelTable& kernel_table() noexcept;

// Every target built into this library ("sse2", "avx2", ...), best last, and whether this CPU runs it.
struct KernelTarget {
  const KernelTable* table;
  bool supported;
};
std::size_t kernel_targets(KernelTarget* out, std::size_t max) noexcept;

}  // namespace posenc::kernels
