#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"
#include "reference.hpp"

using posenc::StatusCode;

namespace {

double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (std::size_t k = 0; k < got.size(); ++k)
    worst = std::fmax(worst, std::fabs(static_cast<double>(got[k]) - want[k]));
  return worst;
}

}  // namespace

TEST_CASE("sinusoidal: matches the float64 formula at every tail length") {
  // d_model 1 … 40 covers every tail of every batch width (4 for wasm/SSE, 8 for AVX, 16 for AVX-512)
  // and odd d_model (a last sin column with no cos).
  for (const double base : {10000.0, 500000.0, 2.0}) {
    for (std::size_t d_model = 1; d_model <= 40; ++d_model) {
      const std::size_t seq_len = 67;
      std::vector<float> out(seq_len * d_model, -99.0f);
      REQUIRE(posenc::sinusoidal(out.data(), seq_len, d_model, {base}).ok());
      CAPTURE(d_model);
      CAPTURE(base);
      CHECK(max_abs_diff(out, posenc::reference::sinusoidal(seq_len, d_model, base)) <= 4e-7);
    }
  }
}

TEST_CASE("sinusoidal: the error does not grow with position (angles reduced in float64)") {
  // pos up to 2^17: a float32 angle pos * w_0 = pos would be off by up to 2^17 * 2^-24 = 7.8e-3 rad.
  const std::size_t seq_len = std::size_t{1} << 17, d_model = 6;
  std::vector<float> out(seq_len * d_model);
  REQUIRE(posenc::sinusoidal(out.data(), seq_len, d_model).ok());
  CHECK(max_abs_diff(out, posenc::reference::sinusoidal(seq_len, d_model, 10000.0)) <= 4e-7);
}

TEST_CASE("sinusoidal: published d_model = 8 rows, to 3 decimals") {
  // Rows of the table as printed in the course material for d_model = 8 (position 5 re-derived from
  // the formula: a widely copied version of this table gets its first two entries wrong).
  std::vector<float> out(6 * 8);
  REQUIRE(posenc::sinusoidal(out.data(), 6, 8).ok());
  const double pos1[8] = {0.841, 0.540, 0.100, 0.995, 0.010, 1.000, 0.001, 1.000};
  const double pos5[8] = {-0.959, 0.284, 0.479, 0.878, 0.050, 0.999, 0.005, 1.000};
  for (int j = 0; j < 8; ++j) {
    CAPTURE(j);
    CHECK(std::fabs(out[40 + j] - pos5[j]) <= 0.0005 + 1e-9);
    CHECK(std::fabs(out[8 + j] - pos1[j]) <= 0.0005 + 1e-9);
  }
  // Row 0 is exactly [0, 1, 0, 1, ...].
  for (int j = 0; j < 8; ++j) CHECK(out[j] == (j % 2 == 0 ? 0.0f : 1.0f));
}

TEST_CASE("sinusoidal: bad arguments give a status naming the argument and leave out untouched") {
  std::vector<float> out(16, 7.0f);
  auto s = posenc::sinusoidal(out.data(), 0, 4);
  CHECK(s.code == StatusCode::kBadArgument);
  CHECK(std::string(s.message).find("seq_len") != std::string::npos);
  s = posenc::sinusoidal(out.data(), 4, 0);
  CHECK(s.code == StatusCode::kBadArgument);
  CHECK(std::string(s.message).find("d_model") != std::string::npos);
  for (const double base : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    s = posenc::sinusoidal(out.data(), 4, 4, {base});
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(s.message).find("base") != std::string::npos);
  }
  s = posenc::sinusoidal(out.data(), SIZE_MAX / 2, 3);
  CHECK(s.code == StatusCode::kTooLarge);
  CHECK(posenc::sinusoidal(nullptr, 4, 4).code == StatusCode::kBadArgument);
  for (float v : out) CHECK(v == 7.0f);
}

TEST_CASE("simd_arch: names the instruction set the kernels were built for") {
  const std::string arch = posenc::simd_arch();
  CHECK(!arch.empty());
#ifdef __EMSCRIPTEN__
  CHECK(arch == "wasm");  // the WASM doctest run must exercise the SIMD128 kernels
#endif
  MESSAGE("kernels built for ", arch);
}
