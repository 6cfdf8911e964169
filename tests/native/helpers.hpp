// Small helpers shared by the doctest files: seeded data and the largest difference to a twin.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
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

// The config of a preset in the repository's presets file (real models' config.json keys).
inline std::string preset_config(const std::string& id) {
  std::ifstream in(std::string(POSENC_DATA_DIR) + "/presets.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const auto presets = nlohmann::json::parse(text.str());
  for (const auto& p : presets["presets"])
    if (p["id"] == id) return p["config"].dump();
  FAIL("no preset " << id);
  return {};
}

}  // namespace posenc::test
