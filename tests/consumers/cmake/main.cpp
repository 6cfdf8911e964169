// A consumer of the installed (or add_subdirectory'd) posenc: one call, checked.
#include <posenc/posenc.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  std::vector<float> pe(2 * 2);
  const posenc::Status s = posenc::sinusoidal(pe.data(), 2, 2);
  if (!s.ok() || std::fabs(pe[2] - std::sin(1.0)) > 1e-6) {
    std::printf("posenc consumer: wrong result (%s)\n", s.message);
    return 1;
  }
  std::printf("posenc consumer: sinusoidal(2, 2)[1][0] = %.6f (simd %s)\n", pe[2], posenc::simd_arch());
  return 0;
}
