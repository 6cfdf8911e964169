// The extrapolation lab's kernels (cpp/lab/), one table per SIMD target like table.hpp's, and
// picked to match it: lab_kernel_table() is the table of kernel_table()'s target.
#pragma once

#include <cstddef>

namespace posenc::kernels {

struct LabKernelTable {
  const char* arch;
#define POSENC_LAB_KERNEL(name, ret, params) ret(*name) params noexcept;
#include "lab/kernels/lab_kernels.inc"
#undef POSENC_LAB_KERNEL
};

const LabKernelTable& lab_kernel_table() noexcept;

}  // namespace posenc::kernels
