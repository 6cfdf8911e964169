#include "kernels/kernels.hpp"
#include "posenc/posenc.hpp"

namespace posenc {

const char* simd_arch() noexcept { return kernels::arch_name(); }

std::size_t simd_targets(SimdTarget* out, std::size_t max) noexcept {
  kernels::KernelTarget targets[8];
  const std::size_t n = kernels::kernel_targets(targets, 8);
  for (std::size_t i = 0; i < n && i < max && i < 8; ++i) out[i] = {targets[i].table->arch, targets[i].supported};
  return n;
}

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kBadArgument: return "bad_argument";
    case StatusCode::kBadShape: return "bad_shape";
    case StatusCode::kTooLarge: return "too_large";
    case StatusCode::kUnavailable: return "unavailable";
  }
  return "unknown";
}

}  // namespace posenc
