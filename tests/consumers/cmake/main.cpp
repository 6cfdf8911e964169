// A consumer of the installed (or add_subdirectory'd) posenc: one call, checked; through
// add_subdirectory also the lab (posenc::lab), which only the source tree offers.
#include <posenc/posenc.hpp>
#ifdef POSENC_CONSUMER_LAB
#include <posenc/lab.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  std::vector<float> pe(2 * 2);
  const posenc::Status s = posenc::sinusoidal(pe.data(), 2, 2);
  if (!s.ok() || std::fabs(pe[2] - std::sin(1.0)) > 1e-6) {
    std::printf("posenc consumer: wrong result (%s)\n", s.message);
    return 1;
  }
  std::printf("posenc consumer: sinusoidal(2, 2)[1][0] = %.6f (simd %s)\n", pe[2], posenc::simd_arch());
#ifdef POSENC_CONSUMER_LAB
  posenc::lab::Scheme scheme{};
  if (!posenc::lab::parse_scheme("alibi", &scheme).ok() || std::strcmp(posenc::lab::scheme_name(scheme), "alibi") != 0) {
    std::printf("posenc consumer: the lab does not read its own scheme name back\n");
    return 1;
  }
  std::printf("posenc consumer: lab scheme %s\n", posenc::lab::scheme_name(scheme));
#endif
  return 0;
}
