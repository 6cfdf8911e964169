// The lab's kernel table for the SIMD target kernel_table() chose (same name, same target).
#include <cstring>

#include "lab/kernels/lab_table.hpp"
#include "kernels/table.hpp"
#include "work_probe.hpp"

namespace posenc::kernels {

#define POSENC_TARGET(ns)                \
  namespace ns {                         \
  extern const LabKernelTable kLabTable; \
  }
#include "kernels/targets.inc"
#undef POSENC_TARGET

const LabKernelTable& lab_kernel_table() noexcept {
  static const LabKernelTable* chosen = [] {
    const LabKernelTable* all[] = {
#define POSENC_TARGET(ns) &ns::kLabTable,
#include "kernels/targets.inc"
#undef POSENC_TARGET
    };
    const char* want = kernel_table().arch;
    for (const LabKernelTable* t : all)
      if (std::strcmp(t->arch, want) == 0) return t;
    return all[0];
  }();
  probe::mark();
  return *chosen;
}

}  // namespace posenc::kernels
