#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "posenc/posenc.hpp"

using posenc::test::preset_config;

using posenc::ConfigDialect;
using posenc::RopeParams;
using posenc::RopeScaling;

namespace {

RopeParams parse(const std::string& json, ConfigDialect dialect = ConfigDialect::kHuggingFace,
                 const std::string& layer_type = "") {
  RopeParams p;
  std::string detail;
  const auto s = posenc::rope_params_from_config(json, {dialect, layer_type}, &p, &detail);
  INFO(detail);
  REQUIRE(s.ok());
  return p;
}

std::vector<double> inv_freq(const RopeParams& p, std::size_t seq_len = 0, double* af = nullptr) {
  std::vector<double> f(posenc::rope_rot_dim(p) / 2);
  double a = 0;
  REQUIRE(posenc::rope_frequencies(p, seq_len, f.data(), f.size(), &a).ok());
  if (af) *af = a;
  return f;
}

}  // namespace

TEST_CASE("config (HF): real presets read to the published parameters") {
  RopeParams p = parse(preset_config("llama-3.1-8b"));
  CHECK(p.head_dim == 128);
  CHECK(p.theta == 500000.0);
  CHECK(p.scaling == RopeScaling::kLlama3);
  CHECK(*p.factor == 8.0);
  CHECK(p.original_max_position_embeddings == 8192);
  CHECK(p.max_position_embeddings == 131072);

  p = parse(preset_config("phi-3.5-mini"));
  CHECK(p.head_dim == 96);
  CHECK(p.scaling == RopeScaling::kLongRope);
  CHECK(p.short_factor.size() == 48);
  CHECK(p.original_max_position_embeddings == 4096);
  double af = 0;
  inv_freq(p, 0, &af);
  CHECK(af == doctest::Approx(1.1902381).epsilon(1e-7));  // factor 131072 / 4096 = 32

  p = parse(preset_config("deepseek-v3"));
  // MLA: a q/k head is qk_nope_head_dim 128 + qk_rope_head_dim 64; HF rotates the last 64, interleaved.
  CHECK(p.head_dim == 192);
  CHECK(posenc::rope_rot_dim(p) == 64);
  CHECK(p.rot_offset == 128);
  CHECK(p.layout == posenc::RopeLayout::kInterleaved);
  CHECK(p.scaling == RopeScaling::kYarn);
  inv_freq(p, 0, &af);
  CHECK(af == 1.0);  // get_mscale(40, 1) / get_mscale(40, 1)

  p = parse(preset_config("gpt-oss-20b"));
  CHECK(p.head_dim == 64);
  CHECK(p.truncate == false);
  CHECK(p.theta == 150000.0);

  p = parse(preset_config("qwen2.5-7b-yarn"));
  CHECK(p.head_dim == 128);  // 3584 / 28
  CHECK(p.scaling == RopeScaling::kYarn);
  CHECK(p.original_max_position_embeddings == 32768);

  // Gemma 3: the global layers scale linearly from θ = 1e6; the sliding ones use θ = 1e4, unscaled.
  p = parse(preset_config("gemma-3-4b"), ConfigDialect::kHuggingFace, "full_attention");
  CHECK(p.head_dim == 256);
  CHECK(p.theta == 1e6);
  CHECK(p.scaling == RopeScaling::kLinear);
  p = parse(preset_config("gemma-3-4b"), ConfigDialect::kHuggingFace, "sliding_attention");
  CHECK(p.theta == 1e4);
  CHECK(p.scaling == RopeScaling::kNone);
}

TEST_CASE("config (HF): the pair layout is the model's, as transformers 5.12 rotates it") {
  using posenc::RopeLayout;
  // rotate_half (i, i + d/2) unless the model's code pairs consecutive dims.
  CHECK(parse(preset_config("llama-3.1-8b")).layout == RopeLayout::kHalfSplit);
  CHECK(parse(preset_config("qwen2.5-7b-yarn")).layout == RopeLayout::kHalfSplit);
  CHECK(parse(preset_config("llama-4-scout")).layout ==
        RopeLayout::kInterleaved);  // complex pairs, text_config llama4_text
  for (const char* type : {"cohere", "glm4", "ernie4_5", "gptj", "llama4_text"})
    CHECK(parse(std::string(R"({"model_type": ")") + type + R"(", "head_dim": 64})").layout ==
          RopeLayout::kInterleaved);
  for (const char* type : {"llama", "mistral", "gemma3_text", "phi3", "gpt_neox"})
    CHECK(parse(std::string(R"({"model_type": ")") + type + R"(", "head_dim": 64})").layout == RopeLayout::kHalfSplit);
  // MLA: interleaved by default (DeepSeek-V3's rope_interleave), half-split when the config says so.
  const auto mla = [](const char* extra) {
    return std::string(R"({"qk_nope_head_dim": 128, "qk_rope_head_dim": 64)") + extra + "}";
  };
  CHECK(parse(mla("")).layout == RopeLayout::kInterleaved);
  CHECK(parse(mla(R"(, "model_type": "deepseek_v3", "rope_interleave": false)")).layout == RopeLayout::kHalfSplit);
}

TEST_CASE("config: one model in the HF (old and new) and GGUF dialects gives the same inv_freq") {
  // Qwen2.5-7B with YaRN ×4, written three ways.
  const std::string hf_old = preset_config("qwen2.5-7b-yarn");
  const std::string hf_new = R"({"hidden_size": 3584, "num_attention_heads": 28, "max_position_embeddings": 32768,
    "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0, "original_max_position_embeddings": 32768}})";
  const std::string gguf =
      R"({"general.architecture": "qwen2", "qwen2.embedding_length": 3584, "qwen2.attention.head_count": 28,
    "qwen2.context_length": 32768, "qwen2.rope.freq_base": 1000000.0, "qwen2.rope.scaling.type": "yarn",
    "qwen2.rope.scaling.factor": 4.0, "qwen2.rope.scaling.original_context_length": 32768})";
  double af_a = 0, af_b = 0, af_c = 0;
  const auto a = inv_freq(parse(hf_old), 0, &af_a);
  const auto b = inv_freq(parse(hf_new), 0, &af_b);
  const auto c = inv_freq(parse(gguf, ConfigDialect::kGguf), 0, &af_c);
  CHECK(a == b);
  CHECK(a == c);
  CHECK(af_a == af_b);
  CHECK(af_a == af_c);
  CHECK(af_a == doctest::Approx(posenc::yarn_get_mscale(4)).epsilon(1e-15));

  // Gemma 3's per-layer rope_parameters (newer HF format) against its older keys.
  const std::string gemma_new = R"({"text_config": {"head_dim": 256, "hidden_size": 2560, "num_attention_heads": 8,
    "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}})";
  for (const char* layer : {"full_attention", "sliding_attention"})
    CHECK(inv_freq(parse(gemma_new, ConfigDialect::kHuggingFace, layer)) ==
          inv_freq(parse(preset_config("gemma-3-4b"), ConfigDialect::kHuggingFace, layer)));
}

TEST_CASE("config: errors say what is wrong and name the value") {
  RopeParams p;
  std::string detail;
  auto s = posenc::rope_params_from_config("{not json", {}, &p, &detail);
  CHECK(s.code == posenc::StatusCode::kBadArgument);
  CHECK(detail.find("not valid JSON") != std::string::npos);
  s = posenc::rope_params_from_config(R"({"head_dim": 64, "rope_scaling": {"rope_type": "wobbly"}})", {}, &p, &detail);
  CHECK(!s.ok());
  CHECK(detail.find("\"wobbly\"") != std::string::npos);
  s = posenc::rope_params_from_config(R"({"rope_theta": 10000})", {}, &p, &detail);
  CHECK(detail.find("head_dim") != std::string::npos);
  s = posenc::rope_params_from_config(
      R"({"head_dim": 64, "rope_parameters": {"full_attention": {"rope_theta": 1e4}, "sliding_attention": {"rope_theta": 1e4}}})",
      {}, &p, &detail);
  CHECK(detail.find("full_attention, sliding_attention") != std::string::npos);
  s = posenc::rope_params_from_config(R"({"head_dim": 64})", {ConfigDialect::kGguf, ""}, &p, &detail);
  CHECK(detail.find("general.architecture") != std::string::npos);
  s = posenc::rope_params_from_config("[1, 2]", {}, &p, &detail);
  CHECK(!s.ok());
  s = posenc::rope_params_from_config(R"({"head_dim": "64"})", {}, &p, &detail);
  CHECK(!s.ok());  // a string is not a number
}
