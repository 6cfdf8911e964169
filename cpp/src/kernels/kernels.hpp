// The kernel entry points the rest of the library calls: each forwards to the table of the SIMD
// target chosen at run time (kernels/dispatch.cpp). Callers (cpp/src/*.cpp) have already checked
// every shape and argument. Not included by the kernel files themselves (see target.hpp).
#pragma once

#include "kernels/table.hpp"

namespace posenc::kernels {

inline const char* arch_name() noexcept { return kernel_table().arch; }

#define POSENC_KERNEL(name, ret, params) \
  template <class... A>                  \
  inline ret name(A... a) noexcept {     \
    return kernel_table().name(a...);    \
  }
#include "kernels/kernels.inc"
#undef POSENC_KERNEL

}  // namespace posenc::kernels
