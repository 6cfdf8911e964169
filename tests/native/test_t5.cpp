// T5's relative buckets (docs/schemes/t5.md): buckets and biases against an independent float64
// twin of HF's bucket function and published values, and what names T5 in a model file.
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

TEST_CASE("t5_bucket: HF's buckets (float32 edges) for distances up to ±400") {
  const posenc::T5BucketParams bi{true, 32, 128}, uni{false, 32, 128};
  REQUIRE(posenc::t5_check(bi).ok());
  CHECK(posenc::t5_bucket(0, bi) == 0);
  CHECK(posenc::t5_bucket(1, bi) == 17);  // key after query: upper half
  CHECK(posenc::t5_bucket(-1, bi) == 1);
  CHECK(posenc::t5_bucket(7, bi) == 23);   // last exact bucket (max_exact = 8)
  CHECK(posenc::t5_bucket(16, bi) == 26);  // 16 + 8 + int(log(2)/log(16) * 8) = 26
  CHECK(posenc::t5_bucket(1000, bi) == 31);
  CHECK(posenc::t5_bucket(-1000, bi) == 15);
  CHECK(posenc::t5_bucket(5, uni) == 0);  // unidirectional: the future is bucket 0
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

TEST_CASE("model files: T5's bias table from GGUF and safetensors, its settings from config.json") {
  std::vector<float> bias(32 * 4);
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i);
  Gguf t;
  t.set("general.architecture", std::string("t5"))
      .set("t5.attention.head_count", 4u)
      .set("t5.attention.relative_buckets_count", 32u)
      .f32_tensor("enc.blk.0.attn_rel_b.weight", {4, 32}, bias);
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
