// The table of this SIMD target's lab kernels (one per POSENC_KERNEL_ID, see target.hpp), filled
// by name from lab/kernels/lab_kernels.inc.
#include "lab/kernels/lab_table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

#define POSENC_LAB_KERNEL(name, ret, params) ret lab_##name params noexcept;
#include "lab/kernels/lab_kernels.inc"
#undef POSENC_LAB_KERNEL

namespace {
constexpr LabKernelTable make_lab_table() {
  LabKernelTable t{};
  t.arch = Arch::name();
#define POSENC_LAB_KERNEL(name, ret, params) t.name = lab_##name;
#include "lab/kernels/lab_kernels.inc"
#undef POSENC_LAB_KERNEL
  return t;
}
}  // namespace

extern const LabKernelTable kLabTable;
constexpr LabKernelTable kLabTable = make_lab_table();

}  // namespace posenc::kernels::POSENC_KERNEL_NS
