// The lab's kernel table for the SIMD target kernel_table() chose (same name, same target).
#include <cstring>

#include "kernels/lab_table.hpp"
#include "kernels/table.hpp"

namespace posenc::kernels {

#define POSENC_TARGET(ns) namespace ns { extern const LabKernelTable kLabTable; }
#ifdef POSENC_HAVE_KERNELS_BASELINE
POSENC_TARGET(baseline)
#endif
#ifdef POSENC_HAVE_KERNELS_X86
POSENC_TARGET(sse2)
POSENC_TARGET(sse4_2)
POSENC_TARGET(avx2)
POSENC_TARGET(avx512f)
#endif
#undef POSENC_TARGET

const LabKernelTable& lab_kernel_table() noexcept {
  static const LabKernelTable* chosen = [] {
    const LabKernelTable* all[] = {
#ifdef POSENC_HAVE_KERNELS_BASELINE
        &baseline::kLabTable,
#endif
#ifdef POSENC_HAVE_KERNELS_X86
        &sse2::kLabTable, &sse4_2::kLabTable, &avx2::kLabTable, &avx512f::kLabTable,
#endif
    };
    const char* want = kernel_table().arch;
    for (const LabKernelTable* t : all)
      if (std::strcmp(t->arch, want) == 0) return t;
    return all[0];
  }();
  return *chosen;
}

}  // namespace posenc::kernels
