#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"
#include "helpers.hpp"
#include "reference.hpp"
#include "subsets.hpp"

using posenc::StatusCode;
using posenc::test::max_abs_diff;

TEST_CASE("sinusoidal: matches the float64 formula at every tail length" * kKernels) {
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

TEST_CASE("sinusoidal: the error does not grow with position (angles reduced in float64)" * kKernels) {
  // pos up to 2^17: a float32 angle pos * w_0 = pos would be off by up to 2^17 * 2^-24 = 7.8e-3 rad.
  const std::size_t seq_len = std::size_t{1} << 17, d_model = 6;
  std::vector<float> out(seq_len * d_model);
  REQUIRE(posenc::sinusoidal(out.data(), seq_len, d_model).ok());
  CHECK(max_abs_diff(out, posenc::reference::sinusoidal(seq_len, d_model, 10000.0)) <= 4e-7);
}

TEST_CASE("sinusoidal: published d_model = 8 rows, to 3 decimals" * kKernels) {
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

TEST_CASE("simd_arch: the kernels in use are the best supported target, or the one POSENC_SIMD names" * kKernels) {
  const std::string arch = posenc::simd_arch();
  posenc::SimdTarget targets[8];
  const std::size_t n = posenc::simd_targets(targets, 8);
  REQUIRE(n >= 1);
  std::string best, built;
  for (std::size_t i = 0; i < n; ++i) {
    built +=
        std::string(built.empty() ? "" : ", ") + targets[i].name + (targets[i].supported ? "" : " (not on this CPU)");
    if (targets[i].supported) best = targets[i].name;
  }
#ifdef __EMSCRIPTEN__
  CHECK(arch == "wasm");  // the WASM doctest run must exercise the SIMD128 kernels
#endif
  const char* want = std::getenv("POSENC_SIMD");
  if (want != nullptr && *want != '\0') {
    // The suite was asked to run on one target: it does, if this CPU has it.
    bool available = false;
    for (std::size_t i = 0; i < n; ++i) available |= targets[i].supported && std::string(targets[i].name) == want;
    if (available) CHECK(arch == want);
    else MESSAGE("POSENC_SIMD=", want, " is not supported by this CPU: the suite runs on ", arch);
  } else {
    CHECK(arch == best);
  }
  MESSAGE("SIMD targets built: ", built, "; in use: ", arch);
}

TEST_CASE("sinusoidal concat: tensor2tensor [sin | cos] layout at every tail length, odd d_model zero-padded" *
          kKernels) {
  for (std::size_t d_model = 1; d_model <= 40; ++d_model) {
    const std::size_t seq_len = 51;
    std::vector<float> out(seq_len * d_model, -99.0f);
    REQUIRE(posenc::sinusoidal(out.data(), seq_len, d_model, {10000.0, posenc::SinusoidalLayout::kConcat}).ok());
    CAPTURE(d_model);
    CHECK(max_abs_diff(out, posenc::reference::sinusoidal_concat(seq_len, d_model, 10000.0)) <= 4e-7);
  }
}

TEST_CASE("sinusoidal_shift: PE(pos + k) = M_k · PE(pos) for many pos and k, both layouts" * kKernels) {
  const std::size_t d_model = 32, seq_len = 300;
  for (const auto layout : {posenc::SinusoidalLayout::kInterleaved, posenc::SinusoidalLayout::kConcat}) {
    const posenc::SinusoidalParams params{10000.0, layout};
    std::vector<float> pe(seq_len * d_model), m(d_model * d_model);
    REQUIRE(posenc::sinusoidal(pe.data(), seq_len, d_model, params).ok());
    for (const int k : {0, 1, 7, 50, 120, -3, -99}) {
      REQUIRE(posenc::sinusoidal_shift(m.data(), k, d_model, params).ok());
      for (const int pos : {0, 1, 99, 150, 170}) {
        if (pos + k < 0) continue;
        double worst = 0.0;
        for (std::size_t r = 0; r < d_model; ++r) {
          double v = 0.0;
          for (std::size_t c = 0; c < d_model; ++c) v += double(m[r * d_model + c]) * pe[pos * d_model + c];
          worst = std::fmax(worst, std::fabs(v - pe[(pos + k) * d_model + r]));
        }
        CAPTURE(k);
        CAPTURE(pos);
        CHECK(worst <= 2e-6);
      }
    }
  }
  std::vector<float> m(9);
  CHECK(posenc::sinusoidal_shift(m.data(), 1, 3).code == StatusCode::kBadArgument);
  CHECK(posenc::sinusoidal_shift(m.data(), NAN, 2).code == StatusCode::kBadArgument);
}

TEST_CASE("sinusoidal_at: rows for arbitrary (fractional, negative, large) positions match the formula" * kKernels) {
  const std::vector<double> pos = {0.0, 3.0, 2.5, -7.0, 1048576.0};
  for (std::size_t d_model : {6u, 9u, 32u}) {
    std::vector<float> out(pos.size() * d_model);
    REQUIRE(posenc::sinusoidal_at(out.data(), pos.data(), pos.size(), d_model).ok());
    for (std::size_t t = 0; t < pos.size(); ++t)
      for (std::size_t j = 0; j < d_model; ++j) {
        const double angle = pos[t] / std::pow(10000.0, double(2 * (j / 2)) / double(d_model));
        CHECK(std::fabs(out[t * d_model + j] - (j % 2 == 0 ? std::sin(angle) : std::cos(angle))) <= 4e-7);
      }
  }
  const double bad = NAN;
  std::vector<float> out(4);
  CHECK(posenc::sinusoidal_at(out.data(), &bad, 1, 4).code == StatusCode::kBadArgument);
}

TEST_CASE("sinusoidal_check and sinusoidal_shift_check: the functions' own rules, with their messages") {
  // The JS layer asks these before it allocates: each must be the rule the functions state.
  std::vector<float> out(4 * 4);
  const double pos[] = {0.0};
  CHECK(posenc::sinusoidal_check({}).ok());
  CHECK(posenc::sinusoidal_shift_check(3.0, 4).ok());
  const posenc::SinusoidalParams bad_params[] = {
      {0.0}, {-1.0}, {NAN}, {INFINITY}, {10000.0, static_cast<posenc::SinusoidalLayout>(2)}};
  for (const posenc::SinusoidalParams& p : bad_params) {
    const posenc::Status s = posenc::sinusoidal_check(p);
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(posenc::sinusoidal(out.data(), 4, 4, p).message) == s.message);
    CHECK(std::string(posenc::sinusoidal_at(out.data(), pos, 1, 4, p).message) == s.message);
    CHECK(std::string(posenc::sinusoidal_shift_check(1.0, 4, p).message) == s.message);
    CHECK(std::string(posenc::sinusoidal_shift(out.data(), 1.0, 4, p).message) == s.message);
  }
  CHECK(std::string(posenc::sinusoidal_check({0.0}).message) == "base must be finite and > 0");
  const struct {
    double k;
    std::size_t d_model;
    const char* message;
  } bad_shift[] = {{1.0, 0, "d_model must be even and > 0"},
                   {1.0, 3, "d_model must be even and > 0"},
                   {NAN, 4, "k must be finite"},
                   {INFINITY, 4, "k must be finite"}};
  for (const auto& c : bad_shift) {
    const posenc::Status s = posenc::sinusoidal_shift_check(c.k, c.d_model);
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(s.message) == c.message);
    CHECK(std::string(posenc::sinusoidal_shift(out.data(), c.k, c.d_model).message) == c.message);
  }
}
