#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "posenc/posenc.hpp"
#include "helpers.hpp"
#include "reference.hpp"
#include "subsets.hpp"

using posenc::Precision;
using posenc::RopeLayout;
using posenc::RopeParams;
using posenc::RopeScaling;
using posenc::StatusCode;
using posenc::test::max_abs_diff;
using posenc::test::random_floats;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Freqs {
  std::vector<double> inv_freq;
  double attention_factor = 0.0;
  posenc::Status status;
};

Freqs frequencies(const RopeParams& p, std::size_t seq_len = 0) {
  Freqs f;
  f.inv_freq.resize(posenc::rope_rot_dim(p) / 2);
  f.status = posenc::rope_frequencies(p, seq_len, f.inv_freq.data(), f.inv_freq.size(), &f.attention_factor);
  return f;
}

bool message_names(const posenc::Status& s, const char* word) {
  return std::string(s.message).find(word) != std::string::npos;
}

}  // namespace

TEST_CASE("rope frequencies: default inv_freq = theta^(-2i/rot_dim), partial rotary truncates like HF") {
  RopeParams p;
  p.head_dim = 128;
  p.theta = 500000.0;
  Freqs f = frequencies(p);
  REQUIRE(f.status.ok());
  CHECK(f.inv_freq.size() == 64);
  CHECK(f.attention_factor == 1.0);
  for (std::size_t i = 0; i < 64; ++i)
    CHECK(f.inv_freq[i] == doctest::Approx(std::pow(500000.0, -(2.0 * i) / 128.0)).epsilon(1e-14));
  // Phi-2 style partial rotary: int(80 * 0.4) = 32 rotated dims, exponents over 32.
  p = RopeParams{};
  p.head_dim = 80;
  p.partial_rotary_factor = 0.4;
  CHECK(posenc::rope_rot_dim(p) == 32);
  f = frequencies(p);
  REQUIRE(f.status.ok());
  CHECK(f.inv_freq[1] == doctest::Approx(std::pow(10000.0, -2.0 / 32.0)).epsilon(1e-14));
}

TEST_CASE("rope frequencies: golden values of the published scaling formulas") {
  // YaRN correction range (Peng et al. 2023; HF find_correction_range): d=128, θ=1e4, L=4096, β 32/1.
  double low = 0, high = 0;
  posenc::yarn_correction_range(32, 1, 128, 1e4, 4096, true, &low, &high);
  CHECK(low == 20.0);
  CHECK(high == 46.0);
  posenc::yarn_correction_range(32, 1, 128, 1e4, 4096, false, &low, &high);
  CHECK(low == doctest::Approx(20.9445).epsilon(1e-5));
  CHECK(high == doctest::Approx(45.0269).epsilon(1e-5));
  // YaRN get_mscale: 0.1 ln s + 1.
  CHECK(posenc::yarn_get_mscale(4) == doctest::Approx(1.1386294).epsilon(1e-7));
  CHECK(posenc::yarn_get_mscale(40) == doctest::Approx(1.3688879).epsilon(1e-7));
  CHECK(posenc::yarn_get_mscale(0.5) == 1.0);

  // Static NTK-aware base: θ s^(d/(d-2)), d=128, s=4 → 40889.942.
  RopeParams p;
  p.head_dim = 128;
  p.scaling = RopeScaling::kNtk;
  p.factor = 4.0;
  Freqs f = frequencies(p);
  REQUIRE(f.status.ok());
  CHECK(std::fabs(std::pow(f.inv_freq[1], -64.0) - 40889.942) < 1e-3);  // golden to 3 decimals

  // Dynamic NTK: d=128, s=2, L=4096, seq_len=8192 → base 30527.737; at or below L the base is θ·1.
  p.scaling = RopeScaling::kDynamic;
  p.factor = 2.0;
  p.max_position_embeddings = 4096;
  f = frequencies(p, 8192);
  REQUIRE(f.status.ok());
  CHECK(std::fabs(std::pow(f.inv_freq[1], -64.0) - 30527.737) < 1e-3);
  f = frequencies(p, 100);
  CHECK(std::pow(f.inv_freq[1], -64.0) == doctest::Approx(10000.0).epsilon(1e-12));

  // LongRoPE default attention factor sqrt(1 + ln s / ln L): s=32, L=4096 → 1.1902381.
  p = RopeParams{};
  p.head_dim = 8;
  p.scaling = RopeScaling::kLongRope;
  p.factor = 32.0;
  p.original_max_position_embeddings = 4096;
  p.short_factor = {1.0, 1.5, 2.0, 4.0};
  p.long_factor = {2.0, 3.0, 5.0, 8.0};
  f = frequencies(p, 4096);
  REQUIRE(f.status.ok());
  CHECK(f.attention_factor == doctest::Approx(1.1902381).epsilon(1e-7));
  CHECK(f.inv_freq[3] == doctest::Approx(1.0 / (4.0 * std::pow(1e4, 6.0 / 8.0))).epsilon(1e-14));
  f = frequencies(p, 4097);  // long factors iff seq_len > original max
  CHECK(f.inv_freq[3] == doctest::Approx(1.0 / (8.0 * std::pow(1e4, 6.0 / 8.0))).epsilon(1e-14));

  // Llama 3.1 (d=128, θ=5e5, s=8, low 1, high 4, L=8192): pairs < 29 unchanged, 29…34 smoothed,
  // >= 35 divided by 8 (wavelength 2π θ^(2i/d) against 8192/4 and 8192/1).
  p = RopeParams{};
  p.head_dim = 128;
  p.theta = 500000.0;
  p.scaling = RopeScaling::kLlama3;
  p.factor = 8.0;
  p.original_max_position_embeddings = 8192;
  f = frequencies(p);
  REQUIRE(f.status.ok());
  int first_changed = -1, first_divided = -1;
  for (int i = 0; i < 64; ++i) {
    const double plain = std::pow(500000.0, -(2.0 * i) / 128.0);
    if (first_changed < 0 && std::fabs(f.inv_freq[i] / plain - 1.0) > 1e-12) first_changed = i;
    if (first_divided < 0 && f.inv_freq[i] == doctest::Approx(plain / 8.0).epsilon(1e-15)) first_divided = i;
  }
  CHECK(first_changed == 29);
  CHECK(first_divided == 35);
}

TEST_CASE("rope frequencies: YaRN ramps from extrapolation to interpolation across the correction range") {
  RopeParams p;
  p.head_dim = 128;
  p.scaling = RopeScaling::kYarn;
  p.factor = 4.0;
  p.original_max_position_embeddings = 4096;
  Freqs f = frequencies(p);
  REQUIRE(f.status.ok());
  CHECK(f.attention_factor == doctest::Approx(1.1386294).epsilon(1e-7));
  for (int i = 0; i < 64; ++i) {
    const double plain = std::pow(1e4, -(2.0 * i) / 128.0);
    const double ramp = std::fmin(std::fmax((i - 20.0) / (46.0 - 20.0), 0.0), 1.0);
    CHECK(f.inv_freq[i] == doctest::Approx(plain / 4.0 * ramp + plain * (1 - ramp)).epsilon(1e-14));
  }
  // DeepSeek-V3 style: factor 40, mscale = mscale_all_dim = 1 → attention factor 1 (the ratio).
  p.factor = 40.0;
  p.mscale = 1.0;
  p.mscale_all_dim = 1.0;
  CHECK(frequencies(p).attention_factor == 1.0);
  p.mscale_all_dim = 0.0;  // HF: both must be non-zero, else get_mscale(factor)
  CHECK(frequencies(p).attention_factor == doctest::Approx(1.3688879).epsilon(1e-7));
  // Factor derived from max / original max when unset.
  p.factor.reset();
  p.max_position_embeddings = 4096 * 8;
  CHECK(frequencies(p).attention_factor == doctest::Approx(posenc::yarn_get_mscale(8)).epsilon(1e-15));
}

TEST_CASE("rope frequencies: proportional keeps head_dim/2 pairs, zero past the rotated ones") {
  RopeParams p;
  p.head_dim = 256;
  p.partial_rotary_factor = 0.25;
  p.theta = 1e6;
  p.scaling = RopeScaling::kProportional;
  Freqs f = frequencies(p);
  REQUIRE(f.status.ok());
  REQUIRE(f.inv_freq.size() == 128);
  for (int i = 0; i < 128; ++i)
    CHECK(f.inv_freq[i] ==
          (i < 32 ? doctest::Approx(std::pow(1e6, -(2.0 * i) / 256.0)).epsilon(1e-14) : doctest::Approx(0.0)));
}

TEST_CASE("rope frequencies: bad parameters give a status naming the parameter") {
  RopeParams p;
  p.head_dim = 64;
  auto status_of = [](RopeParams q) { return frequencies(q).status; };
  RopeParams q = p;
  q.rot_dim = 7;
  CHECK(message_names(status_of(q), "rot_dim must be even"));
  q.rot_dim = 66;
  CHECK(message_names(status_of(q), "rot_dim must be <= head_dim"));
  q = p;
  q.head_dim = 0;
  CHECK(message_names(status_of(q), "head_dim"));
  q = p;
  q.theta = INFINITY;
  CHECK(message_names(status_of(q), "theta"));
  q = p;
  q.scaling = RopeScaling::kLinear;
  CHECK(message_names(status_of(q), "factor is required for linear"));
  q.factor = 0.5;
  CHECK(message_names(status_of(q), "factor must be finite and >= 1"));
  q.factor = NAN;
  CHECK(message_names(status_of(q), "factor must be finite"));
  q = p;
  q.scaling = RopeScaling::kYarn;
  q.factor = 4.0;
  CHECK(message_names(status_of(q), "original_max_position_embeddings is required for yarn"));
  q = p;
  q.scaling = RopeScaling::kLlama3;
  q.factor = 8.0;
  q.original_max_position_embeddings = 8192;
  q.high_freq_factor = 0.5;  // below low_freq_factor 1 (equal is valid: Llama 4 Scout's empty band)
  CHECK(message_names(status_of(q), "high_freq_factor"));
  q = p;
  q.scaling = RopeScaling::kLongRope;
  q.original_max_position_embeddings = 4096;
  q.short_factor = {1.0};
  q.long_factor = {1.0};
  CHECK(status_of(q).code == StatusCode::kBadShape);
  q = p;
  q.partial_rotary_factor = 1.5;
  CHECK(message_names(status_of(q), "partial_rotary_factor"));
}

TEST_CASE("apply_rope: matches the float64 rotation at every tail length, both layouts and precisions" * kKernels) {
  for (const auto layout : {RopeLayout::kHalfSplit, RopeLayout::kInterleaved}) {
    for (const auto precision : {Precision::kFast, Precision::kAccurate}) {
      for (std::size_t head_dim = 2; head_dim <= 40; head_dim += 2) {
        for (const std::size_t rot_dim : {head_dim, head_dim / 2 + (head_dim / 2) % 2}) {
          if (rot_dim == 0) continue;
          const std::size_t seq_len = 5, n_heads = 3;
          RopeParams p;
          p.head_dim = head_dim;
          p.rot_dim = rot_dim;
          const Freqs f = frequencies(p);
          REQUIRE(f.status.ok());
          const std::vector<double> pos = {0, 1, 17, 1000, 123457};
          std::vector<double> angle(seq_len * rot_dim / 2);
          for (std::size_t t = 0; t < seq_len; ++t)
            for (std::size_t k = 0; k < rot_dim / 2; ++k)
              angle[t * rot_dim / 2 + k] =
                  precision == Precision::kFast
                      ? static_cast<double>(static_cast<float>(pos[t]) * static_cast<float>(f.inv_freq[k]))
                      : pos[t] * f.inv_freq[k];
          std::vector<float> x = random_floats(seq_len * n_heads * head_dim, 7 + head_dim);
          const auto want = posenc::reference::rope(x, seq_len, n_heads, head_dim, rot_dim, angle,
                                                    layout == RopeLayout::kInterleaved, 0.75);
          posenc::RopeApplyOptions o{layout, precision, 0.75};
          REQUIRE(
              posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), rot_dim, pos.data(), 0.0, o)
                  .ok());
          CAPTURE(head_dim);
          CAPTURE(rot_dim);
          CAPTURE(static_cast<int>(layout));
          CAPTURE(static_cast<int>(precision));
          CHECK(max_abs_diff(x, want) <= 1e-6);
        }
      }
    }
  }
}

TEST_CASE("apply_rope: rot_offset rotates the slice [rot_offset, rot_offset + rot_dim) of each head, the rest pass" *
          kKernels) {
  // DeepSeek-V2/V3's MLA heads: [nope | rope], the rope part rotated in place (float64 twin on the
  // slices cut out by hand, so the kernel's own addressing is not what is compared against).
  const std::size_t seq_len = 4, n_heads = 3;
  for (const auto layout : {RopeLayout::kHalfSplit, RopeLayout::kInterleaved}) {
    for (const auto& shape : {std::array<std::size_t, 3>{24, 8, 16}, {24, 8, 5}, {192, 64, 128}, {10, 2, 8}}) {
      // (not a structured binding: clang 14 cannot capture one in CAPTURE's lambda)
      const std::size_t head_dim = shape[0], rot_dim = shape[1], rot_offset = shape[2];
      RopeParams p;
      p.head_dim = rot_dim;
      const Freqs f = frequencies(p);
      REQUIRE(f.status.ok());
      const std::vector<double> pos = {0, 3, 700, 4093};
      std::vector<double> angle(seq_len * rot_dim / 2);
      for (std::size_t t = 0; t < seq_len; ++t)
        for (std::size_t k = 0; k < rot_dim / 2; ++k) angle[t * rot_dim / 2 + k] = pos[t] * f.inv_freq[k];
      const std::vector<float> x0 = random_floats(seq_len * n_heads * head_dim, 11 + head_dim + rot_offset);
      std::vector<float> slice(seq_len * n_heads * rot_dim);
      for (std::size_t v = 0; v < seq_len * n_heads; ++v)
        for (std::size_t d = 0; d < rot_dim; ++d) slice[v * rot_dim + d] = x0[v * head_dim + rot_offset + d];
      const auto rotated = posenc::reference::rope(slice, seq_len, n_heads, rot_dim, rot_dim, angle,
                                                   layout == RopeLayout::kInterleaved, 1.0);
      std::vector<double> want(x0.begin(), x0.end());
      for (std::size_t v = 0; v < seq_len * n_heads; ++v)
        for (std::size_t d = 0; d < rot_dim; ++d) want[v * head_dim + rot_offset + d] = rotated[v * rot_dim + d];
      std::vector<float> x = x0;
      posenc::RopeApplyOptions o{layout, Precision::kAccurate, 1.0};
      o.rot_offset = rot_offset;
      REQUIRE(posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), rot_dim, pos.data(), 0.0, o)
                  .ok());
      CAPTURE(head_dim);
      CAPTURE(rot_offset);
      CHECK(max_abs_diff(x, want) <= 1e-6);
      for (std::size_t v = 0; v < seq_len * n_heads; ++v)  // outside the slice: bit for bit the input
        for (std::size_t d = 0; d < head_dim; ++d)
          if (d < rot_offset || d >= rot_offset + rot_dim) REQUIRE(x[v * head_dim + d] == x0[v * head_dim + d]);
      // Past the head: refused, x untouched.
      o.rot_offset = head_dim - rot_dim + 2;
      x = x0;
      CHECK(message_names(
          posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), rot_dim, pos.data(), 0.0, o),
          "rot_offset + rot_dim must be <= head_dim"));
      CHECK(x == x0);
    }
  }
  // The same rule on the parameters.
  RopeParams p;
  p.head_dim = 192;
  p.rot_dim = 64;
  p.rot_offset = 130;
  CHECK(message_names(frequencies(p).status, "rot_offset + rot_dim must be <= head_dim"));
  p.rot_offset = 128;
  CHECK(frequencies(p).status.ok());
}

TEST_CASE("apply_rope: keeps each pair's norm, -pos undoes +pos, and q·k depends only on i - j" * kKernels) {
  const std::size_t head_dim = 64, n_heads = 2, seq_len = 6;
  RopeParams p;
  p.head_dim = head_dim;
  const Freqs f = frequencies(p);
  const std::vector<double> pos = {3, 10, 250, 4000, 65536, 1e6};
  std::vector<double> neg(pos.size());
  for (std::size_t t = 0; t < pos.size(); ++t) neg[t] = -pos[t];
  for (const auto layout : {RopeLayout::kHalfSplit, RopeLayout::kInterleaved}) {
    const std::vector<float> x0 = random_floats(seq_len * n_heads * head_dim, 99);
    std::vector<float> x = x0;
    posenc::RopeApplyOptions o{layout, Precision::kAccurate, 1.0};
    REQUIRE(
        posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), head_dim, pos.data(), 0, o).ok());
    for (std::size_t v = 0; v < seq_len * n_heads; ++v)
      for (std::size_t k = 0; k < head_dim / 2; ++k) {
        const std::size_t a = v * head_dim + (layout == RopeLayout::kInterleaved ? 2 * k : k);
        const std::size_t b = v * head_dim + (layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + head_dim / 2);
        CHECK(std::hypot(x[a], x[b]) == doctest::Approx(std::hypot(x0[a], x0[b])).epsilon(1e-6));
      }
    REQUIRE(
        posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), head_dim, neg.data(), 0, o).ok());
    for (std::size_t k = 0; k < x.size(); ++k) CHECK(x[k] == doctest::Approx(x0[k]).epsilon(0).scale(1).epsilon(2e-6));

    // The same q and k vectors placed at (i, j) pairs with equal i - j give the same score.
    const std::vector<float> q = random_floats(head_dim, 1), k = random_floats(head_dim, 2);
    auto score = [&](double i, double j) {
      std::vector<float> qi = q, kj = k;
      posenc::apply_rope(qi.data(), 1, 1, head_dim, f.inv_freq.data(), head_dim, &i, 0, o);
      posenc::apply_rope(kj.data(), 1, 1, head_dim, f.inv_freq.data(), head_dim, &j, 0, o);
      double dot = 0;
      for (std::size_t d = 0; d < head_dim; ++d) dot += static_cast<double>(qi[d]) * kj[d];
      return dot;
    };
    for (const double delta : {0.0, 1.0, 5.0, 100.0}) {
      const double ref = score(delta, 0);
      for (const double j : {1.0, 37.0, 5000.0, 300000.0})
        CHECK(score(j + delta, j) == doctest::Approx(ref).epsilon(0).scale(1).epsilon(2e-5));
    }
  }
}

TEST_CASE("apply_rope with xpos: ζ_k^(±(p − c)/γ) on every pair against float64; q·k depends on n − m and decays" *
          kKernels) {
  // Sun et al. 2022 (torchscale's XPOS): ζ_k = (2k/d + 0.4)/1.4, queries scaled by ζ^(p/γ), keys by ζ^(−p/γ).
  const std::size_t seq_len = 5, n_heads = 2, head_dim = 16, half = 8;
  RopeParams p;
  p.head_dim = head_dim;
  const Freqs f = frequencies(p);
  const std::vector<double> pos = {0, 3, 100, 511, 2000};
  for (const auto layout : {RopeLayout::kHalfSplit, RopeLayout::kInterleaved})
    for (const bool key : {false, true})
      for (const double center : {0.0, 250.0}) {
        std::vector<double> angle(seq_len * half);
        for (std::size_t t = 0; t < seq_len; ++t)
          for (std::size_t k = 0; k < half; ++k) angle[t * half + k] = pos[t] * f.inv_freq[k];
        const std::vector<float> x0 = random_floats(seq_len * n_heads * head_dim, 5);
        auto want = posenc::reference::rope(x0, seq_len, n_heads, head_dim, head_dim, angle,
                                            layout == RopeLayout::kInterleaved);
        for (std::size_t t = 0; t < seq_len; ++t)
          for (std::size_t h = 0; h < n_heads; ++h)
            for (std::size_t k = 0; k < half; ++k) {
              const double zeta = (2.0 * double(k) / double(head_dim) + 0.4) / 1.4;
              CHECK(posenc::xpos_zeta(k, head_dim) == zeta);  // the ζ_k the lab's xpos scheme takes
              const double scale = std::pow(zeta, (key ? -1.0 : 1.0) * (pos[t] - center) / 512.0);
              const std::size_t base = (t * n_heads + h) * head_dim;
              want[base + (layout == RopeLayout::kInterleaved ? 2 * k : k)] *= scale;
              want[base + (layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + half)] *= scale;
            }
        std::vector<float> x = x0;
        const posenc::Xpos xpos{512.0, key, center};
        posenc::RopeApplyOptions o{layout, Precision::kAccurate, 1.0};
        o.xpos = &xpos;
        REQUIRE(
            posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, f.inv_freq.data(), head_dim, pos.data(), 0.0, o)
                .ok());
        double worst = 0;
        for (std::size_t i = 0; i < x.size(); ++i)
          worst = std::fmax(worst, std::fabs(x[i] - want[i]) / std::fmax(1.0, std::fabs(want[i])));
        CAPTURE(key);
        CAPTURE(center);
        CHECK(worst <= 2e-6);
      }
  // q_n·k_m: the same for equal n − m (any centre), smaller as the distance grows.
  const std::vector<float> q0 = random_floats(head_dim, 8), k0(head_dim, 0.5f);
  auto score = [&](double n, double m, double center) {
    std::vector<float> q = q0, k = k0;
    const posenc::Xpos qx{512.0, false, center}, kx{512.0, true, center};
    posenc::RopeApplyOptions o{RopeLayout::kHalfSplit, Precision::kAccurate, 1.0};
    o.xpos = &qx;
    posenc::apply_rope(q.data(), 1, 1, head_dim, f.inv_freq.data(), head_dim, &n, 0.0, o);
    o.xpos = &kx;
    posenc::apply_rope(k.data(), 1, 1, head_dim, f.inv_freq.data(), head_dim, &m, 0.0, o);
    double dot = 0;
    for (std::size_t d = 0; d < head_dim; ++d) dot += double(q[d]) * k[d];
    return dot;
  };
  CHECK(score(300, 100, 0) == doctest::Approx(score(1200, 1000, 0)).epsilon(1e-4));
  CHECK(score(300, 100, 0) == doctest::Approx(score(300, 100, 700)).epsilon(1e-4));
  // Without the rotation (θ_k = 0) and with q = k = 1, only the scale remains: Σ_k 2 ζ_k^((n−m)/γ),
  // falling as the distance grows.
  const std::vector<double> still(half, 0.0);
  auto plain = [&](double dist) {
    std::vector<float> q(head_dim, 1.0f), k(head_dim, 1.0f);
    double n = dist, m = 0;
    const posenc::Xpos qx{512.0, false, 0.0}, kx{512.0, true, 0.0};
    posenc::RopeApplyOptions o{RopeLayout::kHalfSplit, Precision::kAccurate, 1.0};
    o.xpos = &qx;
    posenc::apply_rope(q.data(), 1, 1, head_dim, still.data(), head_dim, &n, 0.0, o);
    o.xpos = &kx;
    posenc::apply_rope(k.data(), 1, 1, head_dim, still.data(), head_dim, &m, 0.0, o);
    double dot = 0;
    for (std::size_t d = 0; d < head_dim; ++d) dot += double(q[d]) * k[d];
    return dot;
  };
  CHECK(plain(0) == doctest::Approx(16.0));
  CHECK(plain(64) < plain(0));
  CHECK(plain(512) < plain(64));
  CHECK(plain(4096) < plain(512));
  // Refusals: a bad scale base, M-RoPE's rows.
  std::vector<float> x(head_dim, 1.0f);
  const posenc::Xpos bad{0.0, false, 0.0};
  posenc::RopeApplyOptions o;
  o.xpos = &bad;
  CHECK(message_names(posenc::apply_rope(x.data(), 1, 1, head_dim, f.inv_freq.data(), head_dim, nullptr, 0.0, o),
                      "xpos.scale_base must be finite and > 0"));
}

TEST_CASE("rope_cache: accurate angles stay within 1e-6 rad up to pos = 2^20; fast float32 drifts" * kKernels) {
  // θ = 1e4, head_dim 128: the angle error of cos/sin against the exact float64 angle pos·inv_freq.
  RopeParams p;
  p.head_dim = 128;
  const Freqs f = frequencies(p);
  const std::size_t n_pos = 2048, half = 64;
  std::vector<float> c(n_pos * half), s(n_pos * half);
  double worst[2] = {0, 0};
  for (const auto precision : {Precision::kFast, Precision::kAccurate}) {
    posenc::RopeApplyOptions o{RopeLayout::kHalfSplit, precision, 1.0};
    REQUIRE(posenc::rope_cache(c.data(), s.data(), n_pos, f.inv_freq.data(), 128, nullptr, 1048576.0 - n_pos, o).ok());
    for (std::size_t t = 0; t < n_pos; ++t)
      for (std::size_t k = 0; k < half; ++k) {
        const double exact = std::remainder((1048576.0 - n_pos + t) * f.inv_freq[k], 2 * kPi);
        const double got = std::atan2(s[t * half + k], c[t * half + k]);
        worst[static_cast<int>(precision)] =
            std::fmax(worst[static_cast<int>(precision)], std::fabs(std::remainder(got - exact, 2 * kPi)));
      }
  }
  MESSAGE("max angle error near pos = 2^20: fast ", worst[0], " rad, accurate ", worst[1], " rad");
  CHECK(worst[1] <= 1e-6);
  CHECK(worst[0] > 1e-2);  // float32(inv_freq) alone is off by ~6e-8 relative: x 2^20 = 6e-2 rad
}

TEST_CASE("apply_rope: bad arguments give a status and leave x untouched" * kKernels) {
  std::vector<float> x(2 * 2 * 8, 3.0f);
  const std::vector<double> inv = {1.0, 0.1, 0.01, 0.001};
  CHECK(message_names(posenc::apply_rope(x.data(), 2, 2, 8, inv.data(), 6, nullptr, 0), "rot_dim must be even") ==
        false);
  CHECK(message_names(posenc::apply_rope(x.data(), 2, 2, 8, inv.data(), 7, nullptr, 0), "rot_dim must be even"));
  CHECK(
      message_names(posenc::apply_rope(x.data(), 2, 2, 8, inv.data(), 10, nullptr, 0), "rot_dim must be <= head_dim"));
  CHECK(message_names(posenc::apply_rope(x.data(), 0, 2, 8, inv.data(), 8, nullptr, 0), "seq_len"));
  const std::vector<double> bad_inv = {1.0, NAN, 0.01, 0.001};
  CHECK(message_names(posenc::apply_rope(x.data(), 2, 2, 8, bad_inv.data(), 8, nullptr, 0), "inv_freq must be finite"));
  const std::vector<double> bad_pos = {0.0, INFINITY};
  CHECK(message_names(posenc::apply_rope(x.data(), 2, 2, 8, inv.data(), 8, bad_pos.data(), 0), "pos must be finite"));
  x.assign(x.size(), 3.0f);
  CHECK(message_names(posenc::apply_rope(x.data(), 2, 2, 8, inv.data(), 8, nullptr, NAN), "pos_offset"));
  for (float v : x) CHECK(v == 3.0f);
}

TEST_CASE("apply_rope_check: apply_rope's rules without the tensors, each with apply_rope's own message") {
  std::vector<float> x(2 * 2 * 8, 3.0f);
  const std::vector<double> inv = {1.0, 0.1, 0.01, 0.001};
  const posenc::Xpos bad_xpos{0.0, false, 0.0};
  struct Case {
    std::size_t seq_len, rot_dim;
    double pos_offset;
    posenc::RopeApplyOptions o;
  };
  posenc::RopeApplyOptions off, gain, xpos, ggml;
  off.rot_offset = 2;
  gain.attention_factor = INFINITY;
  xpos.xpos = &bad_xpos;
  ggml.precision = posenc::Precision::kGgml;  // without its parameters
  const Case cases[] = {{2, 10, 0.0, {}}, {2, 7, 0.0, {}},   {0, 8, 0.0, {}},   {2, 8, NAN, {}},
                        {2, 8, 0.0, off}, {2, 8, 0.0, gain}, {2, 8, 0.0, xpos}, {2, 8, 0.0, ggml}};
  CHECK(posenc::apply_rope_check(2, 2, 8, 8, 0.0).ok());
  for (const Case& c : cases) {
    const posenc::Status checked = posenc::apply_rope_check(c.seq_len, 2, 8, c.rot_dim, c.pos_offset, c.o);
    CHECK(checked.code == posenc::StatusCode::kBadArgument);
    CHECK(std::string(checked.message) ==
          posenc::apply_rope(x.data(), c.seq_len, 2, 8, inv.data(), c.rot_dim, nullptr, c.pos_offset, c.o).message);
  }
  // With positions (pos_offset nullopt) the offset is not read.
  CHECK(posenc::apply_rope_check(2, 2, 8, 8, std::nullopt).ok());
  for (float v : x) CHECK(v == 3.0f);
}

TEST_CASE("shift_keys: rotating at p then shifting by delta equals rotating at p + delta, gain applied once" *
          kKernels) {
  const std::size_t seq_len = 5, n_heads = 2, head_dim = 64, half = head_dim / 2;
  posenc::RopeParams yarn;
  yarn.head_dim = head_dim;
  yarn.scaling = posenc::RopeScaling::kYarn;
  yarn.factor = 4.0;
  yarn.original_max_position_embeddings = 4096;
  std::vector<double> inv(half);
  double af = 0;
  REQUIRE(posenc::rope_frequencies(yarn, 0, inv.data(), half, &af).ok());
  REQUIRE(af > 1.1);
  const auto x = posenc::test::random_floats(seq_len * n_heads * head_dim, 31);
  const posenc::RopeApplyOptions o{posenc::RopeLayout::kInterleaved, posenc::Precision::kAccurate, af};
  auto k = x, want = x;
  REQUIRE(posenc::apply_rope(k.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, nullptr, 1000, o).ok());
  REQUIRE(
      posenc::apply_rope(want.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, nullptr, 1000 - 333, o).ok());
  REQUIRE(posenc::shift_keys(k.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, nullptr, -333,
                             posenc::RopeLayout::kInterleaved, posenc::Precision::kAccurate)
              .ok());
  double worst = 0;
  for (std::size_t i = 0; i < k.size(); ++i) worst = std::fmax(worst, std::fabs(k[i] - want[i]));
  CHECK(worst < 2e-6);
  CHECK(posenc::shift_keys(k.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, nullptr, 1,
                           posenc::RopeLayout::kHalfSplit, posenc::Precision::kGgml)
            .code == posenc::StatusCode::kBadArgument);
}

TEST_CASE("apply_rope_rows: M-RoPE sections, Qwen2-VL position ids and Pixtral 2-D RoPE against float64" * kKernels) {
  // Qwen2-VL get_rope_index by hand: text 2, image 1×2×2 at id 2, text at 2 + max(0, 1, 1) + 1 = 4.
  const posenc::MropeSegment segs[] = {{2, 0, 0, 0}, {0, 1, 2, 2}, {1, 0, 0, 0}};
  std::vector<double> pos(3 * 7);
  REQUIRE(posenc::mrope_positions(segs, 3, pos.data(), 7).ok());
  CHECK(pos == std::vector<double>{0, 1, 2, 2, 2, 2, 4, 0, 1, 2, 2, 3, 3, 4, 0, 1, 2, 3, 2, 3, 4});
  CHECK(posenc::mrope_positions(segs, 3, pos.data(), 8).code == StatusCode::kBadShape);

  const std::size_t sec[3] = {2, 3, 3}, half = 8;
  std::uint8_t rows[half];
  REQUIRE(posenc::mrope_pair_rows(sec, 3, false, half, rows).ok());
  CHECK(std::vector<int>(rows, rows + half) == std::vector<int>{0, 0, 1, 1, 1, 2, 2, 2});
  REQUIRE(posenc::mrope_pair_rows(sec, 3, true, half, rows).ok());
  CHECK(std::vector<int>(rows, rows + half) == std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1});
  const std::size_t bad_sec[3] = {2, 3, 2};
  CHECK(posenc::mrope_pair_rows(bad_sec, 3, false, half, rows).code == StatusCode::kBadArgument);
  // llama.cpp's ggml_rope_multi: the unclaimed pairs (here IMROPE's 6: k % 3 == 0 but not below
  // 3·section[0]; or a 4th section) turn by its 4th position id, 0: unrotated.
  constexpr int U = posenc::kMropeUnrotated;
  REQUIRE(posenc::mrope_pair_rows(sec, 3, true, half, rows, true).ok());
  CHECK(std::vector<int>(rows, rows + half) == std::vector<int>{0, 1, 2, 0, 1, 2, U, 1});
  REQUIRE(posenc::mrope_pair_rows(sec, 3, false, half, rows, true).ok());
  CHECK(std::vector<int>(rows, rows + half) == std::vector<int>{0, 0, 1, 1, 1, 2, 2, 2});
  REQUIRE(posenc::mrope_pair_rows(bad_sec, 3, false, half, rows, true).ok());  // a 4th section of 1 pair
  CHECK(std::vector<int>(rows, rows + half) == std::vector<int>{0, 0, 1, 1, 1, 2, 2, U});
  const std::size_t over[3] = {3, 3, 3};
  CHECK(posenc::mrope_pair_rows(over, 3, false, half, rows, true).code == StatusCode::kBadArgument);

  // The rotation of each pair by its row's id, against the float64 reference per token and pair.
  const std::size_t seq_len = 7, n_heads = 2, head_dim = 16;
  REQUIRE(posenc::mrope_pair_rows(sec, 3, false, half, rows).ok());
  std::vector<double> inv(half);
  for (std::size_t k = 0; k < half; ++k) inv[k] = std::pow(10000.0, -2.0 * double(k) / double(head_dim));
  const auto x = random_floats(seq_len * n_heads * head_dim, 41);
  auto y = x;
  REQUIRE(posenc::apply_rope_rows(y.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, pos.data(), 3, rows,
                                  {RopeLayout::kHalfSplit, Precision::kAccurate, 1.0})
              .ok());
  double worst = 0;
  for (std::size_t t = 0; t < seq_len; ++t)
    for (std::size_t h = 0; h < n_heads; ++h)
      for (std::size_t k = 0; k < half; ++k) {
        const double a = pos[rows[k] * seq_len + t] * inv[k];
        const std::size_t i1 = (t * n_heads + h) * head_dim + k, i2 = i1 + half;
        worst = std::fmax(worst, std::fabs(y[i1] - (x[i1] * std::cos(a) - x[i2] * std::sin(a))));
        worst = std::fmax(worst, std::fabs(y[i2] - (x[i2] * std::cos(a) + x[i1] * std::sin(a))));
      }
  CHECK(worst < 2e-6);
  // Unrotated pairs pass through exactly (times the gain, 1 here), the others as before.
  REQUIRE(posenc::mrope_pair_rows(sec, 3, true, half, rows, true).ok());
  auto z = x;
  REQUIRE(posenc::apply_rope_rows(z.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, pos.data(), 3, rows,
                                  {RopeLayout::kHalfSplit, Precision::kAccurate, 1.0})
              .ok());
  for (std::size_t v = 0; v < seq_len * n_heads; ++v)
    for (std::size_t k : {6}) {
      CHECK(z[v * head_dim + k] == x[v * head_dim + k]);
      CHECK(z[v * head_dim + k + half] == x[v * head_dim + k + half]);
    }

  std::vector<double> inv2(head_dim / 2);
  REQUIRE(posenc::rope_2d_frequencies(head_dim, 10000.0, inv2.data(), rows).ok());
  CHECK(inv2[1] == doctest::Approx(std::pow(10000.0, -4.0 / 16)));  // freqs[2]: rows
  CHECK(inv2[4] == doctest::Approx(std::pow(10000.0, -2.0 / 16)));  // freqs[1]: columns
  CHECK(rows[3] == 0);
  CHECK(rows[4] == 1);
  CHECK(posenc::rope_2d_frequencies(6, 10000.0, inv2.data(), rows).code == StatusCode::kBadArgument);
}

TEST_CASE("shift_keys_check and rope_2d_check: the rules shift_keys and rope_2d_frequencies run first, same messages") {
  // The JS layer asks them before it allocates: each must be its function's own rule.
  std::vector<float> k(2 * 1 * 4, 1.0f);
  const double inv[2] = {1.0, 0.01};
  CHECK(posenc::shift_keys_check(3.0, Precision::kFast).ok());
  CHECK(posenc::shift_keys_check(std::nullopt, Precision::kAccurate).ok());
  CHECK(std::string(posenc::shift_keys_check(NAN, Precision::kFast).message) == "delta must be finite");
  CHECK(std::string(posenc::shift_keys_check(1.0, Precision::kGgml).message) ==
        "shift_keys takes precision fast or accurate");
  const std::vector<std::pair<double, Precision>> bad_shifts = {
      {NAN, Precision::kFast}, {INFINITY, Precision::kAccurate}, {1.0, Precision::kGgml}};
  for (const auto& [delta, precision] : bad_shifts) {
    const posenc::Status s = posenc::shift_keys_check(delta, precision);
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(posenc::shift_keys(k.data(), 2, 1, 4, inv, 4, nullptr, delta, RopeLayout::kHalfSplit, precision)
                          .message) == s.message);
  }
  std::vector<double> freq(8);
  std::vector<std::uint8_t> rows(8);
  CHECK(posenc::rope_2d_check(8, 100.0).ok());
  CHECK(std::string(posenc::rope_2d_check(6, 1e4).message) == "head_dim must be a multiple of 4 for 2-D RoPE");
  CHECK(std::string(posenc::rope_2d_check(8, 0.0).message) == "theta must be finite and > 0");
  const std::vector<std::pair<std::size_t, double>> bad_2d = {{6, 1e4}, {0, 1e4}, {8, 0.0}, {8, NAN}, {8, -INFINITY}};
  for (const auto& [head_dim, theta] : bad_2d) {
    const posenc::Status s = posenc::rope_2d_check(head_dim, theta);
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(posenc::rope_2d_frequencies(head_dim, theta, freq.data(), rows.data()).message) == s.message);
  }
}

TEST_CASE("apply_rope_check: an empty table (rot_dim 0) is refused as rot_dim, before head_dim") {
  // A cache of the rotated dims alone (the JS ropeCache) has head_dim = rot_dim: an empty invFreq must
  // read as rot_dim's rule, which the JS layer no longer states itself.
  CHECK(std::string(posenc::apply_rope_check(1, 1, 0, 0, 0.0).message) == "rot_dim must be > 0");
  CHECK(std::string(posenc::apply_rope_check(1, 1, 8, 0, 0.0).message) == "rot_dim must be > 0");
  CHECK(std::string(posenc::apply_rope_check(1, 1, 0, 4, 0.0).message) == "head_dim must be > 0");
}
