#include "kernels/kernels.hpp"
#include "posenc/posenc.hpp"

namespace posenc {

const char* simd_arch() noexcept { return kernels::arch_name(); }

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kBadArgument: return "bad_argument";
    case StatusCode::kBadShape: return "bad_shape";
    case StatusCode::kTooLarge: return "too_large";
  }
  return "unknown";
}

}  // namespace posenc
