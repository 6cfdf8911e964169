// ALiBi (docs/schemes/alibi.md): slopes and biases against an independent float64 twin of
// BLOOM's series and published values, and what names ALiBi in a model file.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "model_writer.hpp"
#include "posenc/posenc.hpp"

using posenc::ModelInfo;
using posenc::StatusCode;
using posenc::test::preset_config;
using test_files::Gguf;
using test_files::read;
using test_files::read_config;

namespace {

// BLOOM's build_alibi_tensor slope series, written independently (float64): the power-of-two
// series 2^(-8/c · k), then the odd terms of the 2c series for the remaining heads.
std::vector<double> bloom_slopes(std::size_t n) {
  const std::size_t c = std::size_t{1} << static_cast<int>(std::floor(std::log2(double(n))));
  const double base = std::pow(2.0, -std::pow(2.0, -(std::log2(double(c)) - 3)));
  std::vector<double> s;
  for (std::size_t k = 1; k <= c; ++k) s.push_back(std::pow(base, double(k)));
  const double extra = std::pow(2.0, -std::pow(2.0, -(std::log2(double(2 * c)) - 3)));
  for (std::size_t k = 0; k < std::min(c, n - c); ++k) s.push_back(std::pow(extra, double(2 * k + 1)));
  return s;
}

}  // namespace

TEST_CASE("alibi_slopes: BLOOM / MPT / ggml series for every head count 1 … 64") {
  // The issue's example (n = 12): 2^-1 … 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
  std::vector<float> s(12);
  REQUIRE(posenc::alibi_slopes(s.data(), 12).ok());
  const double e[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5};
  for (int h = 0; h < 12; ++h) CHECK(s[h] == static_cast<float>(std::exp2(-e[h])));
  for (std::size_t n = 1; n <= 64; ++n) {
    std::vector<float> got(n);
    REQUIRE(posenc::alibi_slopes(got.data(), n).ok());
    const auto want = bloom_slopes(n);
    REQUIRE(want.size() == n);
    for (std::size_t h = 0; h < n; ++h) {
      CAPTURE(n);
      CAPTURE(h);
      CHECK(got[h] == static_cast<float>(want[h]));
    }
  }
  CHECK(posenc::alibi_slopes(s.data(), 0).code == StatusCode::kBadArgument);
  CHECK(std::string(posenc::alibi_slopes(s.data(), 4, -1).message).find("max_bias") != std::string::npos);
}

TEST_CASE("alibi_bias: -slope·distance, causal masks the future, queries sit at the last positions") {
  const std::size_t n_heads = 3, q_len = 2, k_len = 5;
  std::vector<float> b(n_heads * q_len * k_len), slopes(n_heads);
  posenc::alibi_slopes(slopes.data(), n_heads);
  for (const bool causal : {true, false}) {
    REQUIRE(posenc::alibi_bias(b.data(), n_heads, q_len, k_len, causal).ok());
    for (std::size_t h = 0; h < n_heads; ++h)
      for (std::size_t i = 0; i < q_len; ++i)
        for (std::size_t j = 0; j < k_len; ++j) {
          const double qpos = double(k_len - q_len + i), d = qpos - double(j);
          const float v = b[(h * q_len + i) * k_len + j];
          if (causal && d < 0) CHECK(std::isinf(v));
          else CHECK(v == doctest::Approx(-slopes[h] * std::fabs(d)));
        }
  }
}

TEST_CASE("model files: ALiBi from a BLOOM GGUF and from BLOOM and MPT configs") {
  Gguf b;
  b.set("general.architecture", std::string("bloom"))
      .set("bloom.attention.head_count", 16u)
      .set("bloom.embedding_length", 1024u);
  ModelInfo m = read(b.write());
  REQUIRE(m.alibi);
  CHECK(m.alibi->n_heads == 16);
  CHECK(m.alibi->max_bias == 8.0);
  CHECK(m.d_model == 1024);  // bloom.embedding_length: the width the page sets for it
  CHECK_FALSE(m.rope);

  m = read_config(preset_config("mpt-7b"));
  REQUIRE(m.alibi);
  CHECK(m.alibi->n_heads == 32);
  m = read_config(R"({"model_type": "bloom", "n_head": 16, "hidden_size": 1024})");
  CHECK(m.alibi->n_heads == 16);
  CHECK(m.d_model == 1024);
  // MPT without attn_config (or without its alibi key): HF's MptAttentionConfig defaults to ALiBi.
  m = read_config(R"({"model_type": "mpt", "n_heads": 32, "d_model": 4096})");
  REQUIRE(m.alibi);
  CHECK(m.alibi->n_heads == 32);
  CHECK(m.alibi->max_bias == 8.0);
  m = read_config(R"({"model_type": "mpt", "n_heads": 8, "d_model": 512, "attn_config": {"alibi_bias_max": 4}})");
  CHECK(m.alibi->max_bias == 4.0);
}

TEST_CASE("alibi_check: max_bias's rule, which alibi_slopes and alibi_bias state with its message") {
  // The JS layer asks alibi_check before it allocates: it must be the functions' own rule.
  std::vector<float> slopes(4), bias(4 * 2 * 2);
  CHECK(posenc::alibi_check(8.0).ok());
  const double bad_max_bias[] = {0.0, -1.0, NAN, INFINITY};
  for (double max_bias : bad_max_bias) {
    const posenc::Status s = posenc::alibi_check(max_bias);
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(std::string(s.message) == "max_bias must be finite and > 0");
    CHECK(std::string(posenc::alibi_slopes(slopes.data(), 4, max_bias).message) == s.message);
    CHECK(std::string(posenc::alibi_bias(bias.data(), 4, 2, 2, true, max_bias).message) == s.message);
  }
}
