// The table of this SIMD target's kernels (one per POSENC_KERNEL_ID, see target.hpp), filled by
// name from kernels/kernels.inc.
#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

#define POSENC_KERNEL(name, ret, params) ret name params noexcept;
#include "kernels/kernels.inc"
#undef POSENC_KERNEL

namespace {
constexpr KernelTable make_table() {
  KernelTable t{};
  t.arch = Arch::name();
#define POSENC_KERNEL(name, ret, params) t.name = name;
#include "kernels/kernels.inc"
#undef POSENC_KERNEL
  return t;
}
}  // namespace

extern const KernelTable kTable;
constexpr KernelTable kTable = make_table();

}  // namespace posenc::kernels::POSENC_KERNEL_NS
