// ALiBi and T5 (docs/schemes/alibi.md, t5.md): slopes, biases and buckets against independent
// float64 twins and published values, and what names each scheme in a model file.
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

// HF T5Attention._relative_position_bucket with float64 logs (differs from float32 only at edges).
int t5_bucket_f64(std::int64_t d, bool bidirectional, int num_buckets, int max_distance) {
  int bucket = 0;
  if (bidirectional) {
    num_buckets /= 2;
    bucket += d > 0 ? num_buckets : 0;
    d = std::llabs(d);
  } else {
    d = -std::min<std::int64_t>(d, 0);
  }
  const int max_exact = num_buckets / 2;
  if (d < max_exact) return bucket + int(d);
  const auto large = max_exact + std::int64_t(std::log(double(d) / max_exact) /
                                              std::log(double(max_distance) / max_exact) * (num_buckets - max_exact));
  return bucket + int(std::min<std::int64_t>(large, num_buckets - 1));
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

TEST_CASE("t5_bucket: HF's buckets (float32 edges) for distances up to ±400") {
  const posenc::T5BucketParams bi{true, 32, 128}, uni{false, 32, 128};
  REQUIRE(posenc::t5_check(bi).ok());
  CHECK(posenc::t5_bucket(0, bi) == 0);
  CHECK(posenc::t5_bucket(1, bi) == 17);   // key after query: upper half
  CHECK(posenc::t5_bucket(-1, bi) == 1);
  CHECK(posenc::t5_bucket(7, bi) == 23);   // last exact bucket (max_exact = 8)
  CHECK(posenc::t5_bucket(16, bi) == 26);  // 16 + 8 + int(log(2)/log(16) * 8) = 26
  CHECK(posenc::t5_bucket(1000, bi) == 31);
  CHECK(posenc::t5_bucket(-1000, bi) == 15);
  CHECK(posenc::t5_bucket(5, uni) == 0);   // unidirectional: the future is bucket 0
  CHECK(posenc::t5_bucket(-5, uni) == 5);
  CHECK(posenc::t5_bucket(-1000, uni) == 31);
  // float32 and float64 logs could put an edge one bucket apart; for these settings they agree.
  for (int d = -400; d <= 400; ++d)
    for (const auto& p : {bi, uni}) {
      CAPTURE(d);
      CHECK(posenc::t5_bucket(d, p) == t5_bucket_f64(d, p.bidirectional, p.num_buckets, p.max_distance));
    }
  CHECK(posenc::t5_check({true, 2, 128}).code == StatusCode::kBadArgument);
  CHECK(posenc::t5_check({false, 32, 16}).code == StatusCode::kBadArgument);
}

TEST_CASE("t5_bias: table[bucket(j - qpos)][h] for every head, query and key") {
  const std::size_t n_heads = 2, q_len = 3, k_len = 40;
  const posenc::T5BucketParams p{true, 8, 20};
  std::vector<float> table(8 * n_heads);
  for (std::size_t k = 0; k < table.size(); ++k) table[k] = 0.5f * float(k) - 3.0f;
  std::vector<float> bias(n_heads * q_len * k_len);
  REQUIRE(posenc::t5_bias(bias.data(), table.data(), n_heads, q_len, k_len, p).ok());
  for (std::size_t h = 0; h < n_heads; ++h)
    for (std::size_t i = 0; i < q_len; ++i)
      for (std::size_t j = 0; j < k_len; ++j) {
        const int b = t5_bucket_f64(std::int64_t(j) - std::int64_t(k_len - q_len + i), true, 8, 20);
        CHECK(bias[(h * q_len + i) * k_len + j] == table[b * n_heads + h]);
      }
  CHECK(posenc::t5_bias(bias.data(), table.data(), 0, q_len, k_len, p).code == StatusCode::kBadArgument);
}

TEST_CASE("model files: ALiBi from a BLOOM GGUF and from BLOOM and MPT configs") {
  Gguf b;
  b.set("general.architecture", std::string("bloom")).set("bloom.attention.head_count", 16u).set("bloom.embedding_length", 1024u);
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

TEST_CASE("model files: T5's bias table from GGUF and safetensors, its settings from config.json") {
  std::vector<float> bias(32 * 4);
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i);
  Gguf t;
  t.set("general.architecture", std::string("t5")).set("t5.attention.head_count", 4u)
      .set("t5.attention.relative_buckets_count", 32u).f32_tensor("enc.blk.0.attn_rel_b.weight", {4, 32}, bias);
  ModelInfo m = read(t.write());
  REQUIRE(m.t5);
  CHECK(m.t5->num_buckets == 32);
  CHECK(m.t5->n_heads == 4);
  CHECK(m.t5->bidirectional);
  CHECK(m.t5->table == bias);

  test_files::Safetensors st;
  st.f32("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {32, 2}, std::vector<float>(64, 0.5f));
  m = read(st.write());
  REQUIRE(m.t5);
  CHECK(m.t5->num_buckets == 32);
  CHECK(m.t5->n_heads == 2);
  CHECK(m.t5->table.size() == 64);

  m = read_config(preset_config("t5-base"));
  REQUIRE(m.t5);
  CHECK(m.t5->n_heads == 12);
  CHECK(m.t5->max_distance == 128);
}
