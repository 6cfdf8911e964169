#include <xsimd/xsimd.hpp>

#include "kernels/kernels.hpp"

namespace posenc::kernels {

const char* arch_name() noexcept { return xsimd::default_arch::name(); }

}  // namespace posenc::kernels
