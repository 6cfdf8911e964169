// Small helpers shared by the doctest files: seeded data and the largest difference to a twin.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace posenc::test {

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

inline double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (std::size_t k = 0; k < got.size(); ++k)
    worst = std::fmax(worst, std::fabs(static_cast<double>(got[k]) - want[k]));
  return worst;
}

}  // namespace posenc::test
