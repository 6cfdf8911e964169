// Model files: GGUF, safetensors and .npy written here byte by byte with the metadata and tensors
// real files carry (llama.cpp's converter, Hugging Face's safetensors), read back, and compared
// with the Hugging Face route of the same model (data/presets.json).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "model_writer.hpp"
#include "posenc/posenc.hpp"
#include "subsets.hpp"

using posenc::ModelInfo;
using posenc::RopeParams;
using posenc::RopeScaling;
using posenc::StatusCode;
using posenc::test::preset_config;
using test_files::Gguf;
using test_files::read;

namespace {

std::string read_error(const std::vector<std::uint8_t>& bytes, StatusCode want = StatusCode::kBadArgument) {
  ModelInfo info;
  std::string detail;
  const auto s = posenc::read_model(posenc::memory_source(bytes.data(), bytes.size()), &info, &detail);
  CHECK(s.code == want);
  CHECK(s.message[0] != '\0');
  return detail;
}

RopeParams hf(const std::string& preset) {
  RopeParams p;
  std::string detail;
  REQUIRE(posenc::rope_params_from_config(preset_config(preset), {}, &p, &detail).ok());
  return p;
}

std::vector<double> inv_freq(const RopeParams& p, std::size_t seq_len, double* af) {
  std::vector<double> f(posenc::rope_rot_dim(p) / 2);
  REQUIRE(posenc::rope_frequencies(p, seq_len, f.data(), f.size(), af).ok());
  return f;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return worst;
}

// llama.cpp's convert_hf_to_gguf.py (LlamaModel, rope_type llama3): the rope_freqs.weight tensor.
std::vector<float> llama3_rope_freqs(double theta, int dim, double factor, double low, double high, double old_len) {
  std::vector<float> out;
  for (int i = 0; i < dim; i += 2) {
    const double freq = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(i) / dim));
    const double wavelen = 2 * 3.14159265358979323846 / freq;
    if (wavelen < old_len / high) out.push_back(1.0f);
    else if (wavelen > old_len / low) out.push_back(static_cast<float>(factor));
    else {
      const double smooth = (old_len / wavelen - low) / (high - low);
      out.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / factor + smooth)));
    }
  }
  return out;
}

std::vector<float> json_floats(const std::string& preset, const char* key) {
  const auto cfg = nlohmann::json::parse(preset_config(preset));
  return cfg["rope_scaling"][key].get<std::vector<float>>();
}

}  // namespace

TEST_CASE("gguf: Llama-3.1-8B's rope_freqs tensor gives the HF llama3 frequencies") {
  // convert_hf_to_gguf.py writes no rope.scaling.type for llama3: only the rope_freqs tensor.
  Gguf g;
  g.set("general.architecture", std::string("llama"))
      .set("llama.context_length", 131072u)
      .set("llama.embedding_length", 4096u)
      .set("llama.attention.head_count", 32u)
      .set("llama.attention.head_count_kv", 8u)
      .set("llama.rope.dimension_count", 128u)
      .set("llama.rope.freq_base", 500000.0f)
      .set("tokenizer.ggml.tokens", std::vector<std::string>{"<s>", "a", "b"})
      .f32_tensor("rope_freqs.weight", {64}, llama3_rope_freqs(500000, 128, 8, 1, 4, 8192));
  const ModelInfo m = read(g.write());
  CHECK(m.architecture == "llama");
  CHECK(m.n_heads == 32);
  CHECK(m.n_kv_heads == 8);
  CHECK(m.context_length == 131072);
  REQUIRE(m.rope);
  CHECK(m.rope->scaling == RopeScaling::kNone);
  CHECK(m.rope->freq_factors.size() == 64);
  double af_gguf = 0, af_hf = 0;
  const auto gguf = inv_freq(*m.rope, 0, &af_gguf);
  const auto ref = inv_freq(hf("llama-3.1-8b"), 0, &af_hf);
  // The factors are float32 (as the converter stores them): equal to float32 rounding.
  CHECK(max_rel_diff(gguf, ref) < 2e-7);
  CHECK(af_gguf == 1.0);
  CHECK(af_hf == 1.0);
}

TEST_CASE("gguf: DeepSeek-V3 and V2 YaRN have a RoPE gain of 1, as in llama.cpp and HF") {
  for (const float mscale_all_dim : {1.0f, 0.707f}) {
    CAPTURE(mscale_all_dim);
    Gguf g;
    g.set("general.architecture", std::string("deepseek2"))
        .set("deepseek2.context_length", 163840u)
        .set("deepseek2.embedding_length", 7168u)
        .set("deepseek2.attention.head_count", 128u)
        .set("deepseek2.attention.key_length", 192u)
        .set("deepseek2.rope.dimension_count", 64u)
        .set("deepseek2.rope.freq_base", 10000.0f)
        .set("deepseek2.rope.scaling.type", std::string("yarn"))
        .set("deepseek2.rope.scaling.factor", 40.0f)
        .set("deepseek2.rope.scaling.original_context_length", 4096u)
        .set("deepseek2.rope.scaling.yarn_log_multiplier", 0.1f * mscale_all_dim);
    const ModelInfo m = read(g.write());
    REQUIRE(m.rope);
    CHECK(m.rope->rot_dim == 64);
    CHECK(m.rope->mscale_all_dim == doctest::Approx(mscale_all_dim).epsilon(1e-6));
    RopeParams ref = hf("deepseek-v3");
    // The rope slice: llama.cpp ropes dims [key_length - n_rot, key_length) with NORM pairs; the HF
    // route says the same of the same model (head [nope 128 | rope 64], interleaved).
    CHECK(m.rope->head_dim == 192);
    CHECK(m.rope->rot_offset == 128);
    CHECK(m.rope->layout == posenc::RopeLayout::kInterleaved);
    CHECK(ref.head_dim == m.rope->head_dim);
    CHECK(posenc::rope_rot_dim(ref) == m.rope->rot_dim);
    CHECK(ref.rot_offset == m.rope->rot_offset);
    CHECK(ref.layout == m.rope->layout);
    double af = 0, af_hf = 0;
    const auto gguf = inv_freq(*m.rope, 0, &af);
    ref.mscale = ref.mscale_all_dim = mscale_all_dim;  // V2: both 0.707 in its config
    const auto want = inv_freq(ref, 0, &af_hf);
    CHECK(af == doctest::Approx(1.0).epsilon(1e-7));
    CHECK(af_hf == doctest::Approx(1.0).epsilon(1e-7));
    CHECK(max_rel_diff(gguf, want) < 1e-12);
  }
}

TEST_CASE("gguf: Phi-3.5-mini's LongRoPE factor tensors, attention factor and llama.cpp's context switch") {
  const auto long_f = json_floats("phi-3.5-mini", "long_factor");
  const auto short_f = json_floats("phi-3.5-mini", "short_factor");
  // Phi3MiniModel writes no scaling type, the attention factor, and the factors as tensors.
  const float attn = static_cast<float>(std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)));
  Gguf g;
  g.set("general.architecture", std::string("phi3"))
      .set("phi3.context_length", 131072u)
      .set("phi3.embedding_length", 3072u)
      .set("phi3.attention.head_count", 32u)
      .set("phi3.rope.dimension_count", 96u)
      .set("phi3.rope.freq_base", 10000.0f)
      .set("phi3.rope.scaling.original_context_length", 4096u)
      .set("phi3.rope.scaling.attn_factor", attn)
      .f32_tensor("rope_factors_long.weight", {48}, long_f)
      .f32_tensor("rope_factors_short.weight", {48}, short_f);
  const ModelInfo m = read(g.write());
  REQUIRE(m.rope);
  CHECK(m.rope->scaling == RopeScaling::kLongRope);
  CHECK(m.rope->context_length == 131072);
  double af = 0, af_hf = 0;
  // llama.cpp: long factors because the context (131072) exceeds 4096 — even for a short input.
  const auto gguf_short_input = inv_freq(*m.rope, 100, &af);
  const auto hf_long = inv_freq(hf("phi-3.5-mini"), 8192, &af_hf);
  CHECK(max_rel_diff(gguf_short_input, hf_long) < 2e-7);  // the factors went through float32
  CHECK(af == doctest::Approx(1.1902381).epsilon(1e-7));
  CHECK(af_hf == doctest::Approx(1.1902381).epsilon(1e-7));
  // HF's rule follows the current seq_len: short factors at 100 tokens.
  double af_short = 0;
  const auto hf_short = inv_freq(hf("phi-3.5-mini"), 100, &af_short);
  CHECK(max_rel_diff(hf_short, gguf_short_input) > 1e-3);
  // A llama.cpp context of 4096 or less picks the short factors.
  RopeParams small = *m.rope;
  small.context_length = 4096;
  CHECK(max_rel_diff(inv_freq(small, 100, &af), hf_short) < 2e-7);
}

TEST_CASE("gguf: Qwen2.5-7B YaRN and gpt-oss-20b match HF (gpt-oss only with truncation, as GGUF has no other)") {
  Gguf q;
  q.set("general.architecture", std::string("qwen2"))
      .set("qwen2.context_length", 32768u)
      .set("qwen2.embedding_length", 3584u)
      .set("qwen2.attention.head_count", 28u)
      .set("qwen2.rope.freq_base", 1000000.0f)
      .set("qwen2.rope.scaling.type", std::string("yarn"))
      .set("qwen2.rope.scaling.factor", 4.0f)
      .set("qwen2.rope.scaling.original_context_length", 32768u);
  ModelInfo m = read(q.write());
  double af = 0, af_hf = 0;
  CHECK(max_rel_diff(inv_freq(*m.rope, 0, &af), inv_freq(hf("qwen2.5-7b-yarn"), 0, &af_hf)) < 1e-12);
  CHECK(af == doctest::Approx(1.1386294).epsilon(1e-7));
  CHECK(af == af_hf);

  // gpt-oss without original_context_length: llama.cpp falls back to {arch}.context_length.
  Gguf o;
  o.set("general.architecture", std::string("gpt-oss"))
      .set("gpt-oss.context_length", 4096u)
      .set("gpt-oss.attention.key_length", 64u)
      .set("gpt-oss.attention.head_count", 64u)
      .set("gpt-oss.rope.freq_base", 150000.0f)
      .set("gpt-oss.rope.scaling.type", std::string("yarn"))
      .set("gpt-oss.rope.scaling.factor", 32.0f)
      .set("gpt-oss.attention.sliding_window", 128u);
  m = read(o.write());
  CHECK(m.rope->original_max_position_embeddings == 4096);
  CHECK(m.rope->truncate);
  CHECK(m.sliding_window == 128);
  RopeParams ref = hf("gpt-oss-20b");
  CHECK_FALSE(ref.truncate);  // HF: truncate false
  const auto gguf = inv_freq(*m.rope, 0, &af);
  CHECK(max_rel_diff(gguf, inv_freq(ref, 0, &af_hf)) > 1e-3);  // the documented difference
  ref.truncate = true;
  CHECK(max_rel_diff(gguf, inv_freq(ref, 0, &af_hf)) < 1e-12);
  CHECK(af == af_hf);
}

TEST_CASE("gguf: llama.cpp's per-architecture choices: pair layout, the MLA rope slice, M-RoPE sections, YaRN β") {
  auto base = [](const std::string& arch) {
    Gguf g;
    g.set("general.architecture", arch)
        .set(arch + ".embedding_length", 256u)
        .set(arch + ".attention.head_count", 4u)
        .set(arch + ".context_length", 4096u);
    return g;
  };
  // llama_model_rope_type: NORM (consecutive pairs) for the llama family, NEOX for qwen2, phi3, gemma3, gpt-oss.
  for (const char* arch : {"llama", "deepseek2", "command-r", "glm4", "llama4"})
    CHECK(read(base(arch).write()).rope->layout == posenc::RopeLayout::kInterleaved);
  for (const char* arch : {"qwen2", "phi3", "phi2", "stablelm", "gemma3", "gpt-oss", "qwen2vl", "qwen3vl"})
    CHECK(read(base(arch).write()).rope->layout == posenc::RopeLayout::kHalfSplit);
  ModelInfo m = read(base("some-new-arch").write());
  CHECK(m.rope->layout == posenc::RopeLayout::kHalfSplit);
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("not in posenc's table") != std::string::npos);

  // MLA without the deepseek2 name: attention.kv_lora_rank marks the [nope | rope] head.
  Gguf mla = base("some-mla-arch");
  mla.set("some-mla-arch.attention.key_length", 192u)
      .set("some-mla-arch.rope.dimension_count", 64u)
      .set("some-mla-arch.attention.kv_lora_rank", 512u);
  CHECK(read(mla.write()).rope->rot_offset == 128);
  // ... and DeepSeek converted for absorbed MLA: key_length 576 (kv_lora_rank + 64), key_length_mla 192.
  Gguf ds = base("deepseek2");
  ds.set("deepseek2.attention.key_length", 576u)
      .set("deepseek2.attention.key_length_mla", 192u)
      .set("deepseek2.rope.dimension_count", 64u);
  m = read(ds.write());
  CHECK(m.rope->head_dim == 192);
  CHECK(m.rope->rot_dim == 64);
  CHECK(m.rope->rot_offset == 128);
  // Partial rotary elsewhere rotates the first dims (Phi-2, StableLM).
  Gguf phi2 = base("phi2");
  phi2.set("phi2.rope.dimension_count", 32u);
  m = read(phi2.write());
  CHECK(m.rope->rot_dim == 32);
  CHECK(m.rope->rot_offset == 0);

  // M-RoPE: rope.dimension_sections [t, h, w, e] (pairs); qwen3vl is llama.cpp's interleaved IMROPE.
  for (const char* arch : {"qwen2vl", "qwen3vl"}) {
    Gguf g = base(arch);
    g.set(std::string(arch) + ".rope.dimension_count", 64u)
        .set(std::string(arch) + ".rope.dimension_sections", std::vector<std::int32_t>{8, 12, 12, 0});
    m = read(g.write());
    CHECK(m.rope->mrope_section == std::vector<std::size_t>{8, 12, 12});
    CHECK(m.rope->mrope_interleaved == (std::string(arch) == "qwen3vl"));
    CHECK(m.warnings.empty());
  }
  Gguf notvl = base("qwen2");
  notvl.set("qwen2.rope.dimension_sections", std::vector<std::int32_t>{8, 12, 12, 0});
  m = read(notvl.write());
  CHECK(m.rope->mrope_section.empty());
  CHECK(m.warnings.size() == 1);

  // YaRN β: qwen2 runs with 32 / 1 whatever the file says (warned); grok reads them.
  for (const char* arch : {"qwen2", "grok"}) {
    Gguf g = base(arch);
    const std::string a = arch;
    g.set(a + ".rope.scaling.type", std::string("yarn"))
        .set(a + ".rope.scaling.factor", 4.0f)
        .set(a + ".rope.scaling.yarn_beta_fast", 16.0f)
        .set(a + ".rope.scaling.yarn_beta_slow", 2.0f);
    m = read(g.write());
    CAPTURE(a);
    CHECK(m.rope->beta_fast == (a == "grok" ? 16.0 : 32.0));
    CHECK(m.rope->beta_slow == (a == "grok" ? 2.0 : 1.0));
    CHECK(m.warnings.size() == (a == "grok" ? 0u : 2u));
  }
}

TEST_CASE(
    "gguf: tensor data offsets must follow the table, aligned and inside the file, as llama.cpp's loader requires") {
  auto model = [] {
    Gguf g;
    g.set("general.architecture", std::string("llama"))
        .set("llama.embedding_length", 64u)
        .set("llama.attention.head_count", 2u)
        .raw_tensor("token_embd.weight", {64, 10}, 0, 64 * 10 * 4)
        .f32_tensor("rope_freqs.weight", {16}, std::vector<float>(16, 2.0f));
    return g;
  };
  CHECK(read(model().write()).rope->freq_factors == std::vector<double>(16, 2.0));
  // rope_freqs pointing at token_embd's data (aligned, in bounds): it would read zeros as factors.
  std::string why = read_error(model().wrong_offset("rope_freqs.weight", 0).write());
  CHECK(why.find("tensor rope_freqs.weight has data offset 0, expected 2560") != std::string::npos);
  why = read_error(model().wrong_offset("token_embd.weight", 7).write());
  CHECK(why.find("tensor token_embd.weight has data offset 7, expected 0") != std::string::npos);
  why = read_error(model().wrong_offset("rope_freqs.weight", 2592).write());  // a gap
  CHECK(why.find("expected 2560") != std::string::npos);
  // The last tensor's data cut off.
  auto cut = model().write();
  cut.resize(cut.size() - 4);
  CHECK(read_error(cut).find("ends past the end of the file") != std::string::npos);
  // Quantized tensors take ggml's block sizes: Q4_0 (type 2) is 18 bytes per 32 values.
  Gguf q;
  q.set("general.architecture", std::string("llama"))
      .set("llama.embedding_length", 64u)
      .set("llama.attention.head_count", 2u)
      .raw_tensor("token_embd.weight", {64, 10}, 2, 64 / 32 * 18 * 10)
      .f32_tensor("rope_freqs.weight", {16}, std::vector<float>(16, 2.0f));
  CHECK(read(q.write()).rope->freq_factors.size() == 16);
  Gguf odd;
  odd.set("general.architecture", std::string("llama")).raw_tensor("token_embd.weight", {48, 10}, 2, 480);
  CHECK(read_error(odd.write()).find("not a multiple of its type's block of 32") != std::string::npos);
  Gguf undefined;
  undefined.set("general.architecture", std::string("llama")).raw_tensor("token_embd.weight", {64}, 4, 64);
  CHECK(read_error(undefined.write()).find("ggml type 4, which ggml does not define") != std::string::npos);
  Gguf twice;
  twice.set("general.architecture", std::string("llama"))
      .f32_tensor("rope_freqs.weight", {16}, std::vector<float>(16, 1.0f))
      .f32_tensor("rope_freqs.weight", {16}, std::vector<float>(16, 2.0f));
  CHECK(read_error(twice.write()).find("tensor name rope_freqs.weight appears twice") != std::string::npos);
}

TEST_CASE("gguf: a scaling factor without a type is linear; none ignores it") {
  Gguf g;
  g.set("general.architecture", std::string("llama"))
      .set("llama.embedding_length", 256u)
      .set("llama.attention.head_count", 4u)
      .set("llama.rope.scaling.factor", 4.0f);
  ModelInfo m = read(g.write());
  CHECK(m.rope->scaling == RopeScaling::kLinear);
  CHECK(*m.rope->factor == 4.0);
  g.set("llama.rope.scaling.type", std::string("none"));
  m = read(g.write());
  CHECK(m.rope->scaling == RopeScaling::kNone);
  CHECK(m.warnings.size() == 1);
}

TEST_CASE("gguf: GPT-2's position_embd table") {
  std::vector<float> table(16 * 8);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = 0.01f * static_cast<float>(i) - 0.5f;
  Gguf g;
  g.set("general.architecture", std::string("gpt2"))
      .set("gpt2.context_length", 16u)
      .set("gpt2.embedding_length", 8u)
      .set("gpt2.attention.head_count", 2u)
      .f32_tensor("position_embd.weight", {8, 16}, table)
      .raw_tensor("token_embd.weight", {8, 50257}, 1, 8 * 50257 * 2);
  ModelInfo m = read(g.write());
  REQUIRE(m.position_table);
  CHECK(m.position_table->max_len == 16);
  CHECK(m.position_table->d_model == 8);
  CHECK(m.position_table->weights == table);
  CHECK_FALSE(m.rope);
  CHECK(m.tensors.size() == 2);
  CHECK(m.tensors[1].shape == std::vector<std::uint64_t>{50257, 8});
  CHECK(m.tensors[1].dtype == "F16");
}

TEST_CASE("gguf: every truncation and every corrupted count fails cleanly, naming the offset") {
  Gguf g;
  g.set("general.architecture", std::string("llama"))
      .set("llama.embedding_length", 64u)
      .set("llama.attention.head_count", 2u)
      .set("llama.rope.freq_base", 10000.0f)
      .f32_tensor("rope_freqs.weight", {16}, std::vector<float>(16, 1.0f));
  const auto good = g.write();
  for (std::size_t n = 1; n < good.size(); ++n) {
    const std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    ModelInfo info;
    std::string detail;
    const auto s = posenc::read_model(posenc::memory_source(cut.data(), cut.size()), &info, &detail);
    CAPTURE(n);
    REQUIRE_FALSE(s.ok());
    CHECK(s.code == StatusCode::kBadArgument);
    CHECK(!detail.empty());
  }
  auto bad = good;
  bad[4] = 1;  // version 1
  CHECK(read_error(bad).find("version 2 or 3") != std::string::npos);
  bad = good;
  for (int i = 0; i < 8; ++i) bad[16 + i] = 0xff;  // kv count 2^64 - 1
  CHECK(read_error(bad).find("at byte 16") != std::string::npos);
  bad = good;
  bad[24 + 7] = 0x40;  // the first key's length: 2^62
  CHECK(read_error(bad).find("longer than") != std::string::npos);
  Gguf twice;
  twice.set("general.architecture", std::string("llama"))
      .set("llama.rope.freq_base", 10000.0f)
      .set("llama.rope.freq_base", 500000.0f);
  CHECK(read_error(twice.write()).find("appears twice") != std::string::npos);
}

TEST_CASE("safetensors: GPT-2's wpe.weight in F32, F16 and BF16") {
  const std::vector<float> table = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f, 0.0f};  // exact in every dtype
  std::vector<std::uint8_t> f16 = {0x00, 0x38, 0x00, 0xbc, 0x00, 0x34, 0x00, 0x40, 0x00, 0xb0, 0x00, 0x00};
  std::vector<std::uint8_t> bf16 = {0x00, 0x3f, 0x80, 0xbf, 0x80, 0x3e, 0x00, 0x40, 0x00, 0xbe, 0x00, 0x00};
  for (int k = 0; k < 3; ++k) {
    test_files::Safetensors st;
    st.f32("h.0.attn.c_attn.weight", {2, 6}, std::vector<float>(12, 1.0f));
    if (k == 0) st.f32("transformer.wpe.weight", {3, 2}, table);
    if (k == 1) st.add("transformer.wpe.weight", "F16", {3, 2}, f16);
    if (k == 2) st.add("transformer.wpe.weight", "BF16", {3, 2}, bf16);
    const ModelInfo m = read(st.write());
    CHECK(m.format == posenc::ModelFormat::kSafetensors);
    REQUIRE(m.position_table);
    CHECK(m.position_table->name == "transformer.wpe.weight");
    CHECK(m.position_table->max_len == 3);
    CHECK(m.position_table->d_model == 2);
    CHECK(m.position_table->weights == table);
    CHECK(m.tensors.size() == 2);
  }

  // A table picked by name; a file without one says why.
  test_files::Safetensors other;
  other.f32("my.table", {4, 2}, std::vector<float>(8, 0.25f));
  posenc::ReadOptions named;
  named.table_name = "my.table";
  CHECK(read(other.write(), named).position_table->max_len == 4);
  CHECK_FALSE(read(other.write()).position_table);
  CHECK(read(other.write()).warnings.size() == 1);
}

TEST_CASE("safetensors and npy: malformed headers are refused with the reason") {
  test_files::Safetensors st;
  st.f32("wpe.weight", {3, 2}, std::vector<float>(6, 1.0f));
  auto bytes = st.write();
  auto bad = bytes;
  bad.resize(bad.size() - 4);  // data shorter than data_offsets
  CHECK(read_error(bad).find("data_offsets") != std::string::npos);
  test_files::Safetensors wrong;
  wrong.add("wpe.weight", "F32", {3, 3}, std::vector<std::uint8_t>(24));  // shape needs 36 bytes
  CHECK(read_error(wrong.write()).find("needs 36 bytes") != std::string::npos);

  std::vector<std::uint8_t> data(6 * 4);
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  std::memcpy(data.data(), v.data(), data.size());
  ModelInfo m = read(test_files::npy("<f4", 3, 2, data));
  CHECK(m.format == posenc::ModelFormat::kNpy);
  CHECK(m.position_table->weights == v);
  m = read(test_files::npy("<f4", 3, 2, data, true));  // column-major on disk
  CHECK(m.position_table->weights == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(read_error(test_files::npy(">f4", 3, 2, data)).find("'>f4'") != std::string::npos);
  CHECK(read_error(test_files::npy("<f4", 4, 2, data)).find("needs 32 bytes") != std::string::npos);
  CHECK(read_error(std::vector<std::uint8_t>{'x', 'y'}).find("at byte 0") != std::string::npos);
}

TEST_CASE("config.json: learned and RoPE configs each go to their scheme, or are refused") {
  const auto info = test_files::read_config;
  ModelInfo m = info(preset_config("gpt2"));
  REQUIRE(m.position_table);
  CHECK(m.position_table->max_len == 1024);
  CHECK(m.position_table->d_model == 768);
  CHECK(m.d_model == 768);
  CHECK(m.position_table->weights.empty());
  m = info(preset_config("bert-base"));
  CHECK(m.position_table->max_len == 512);
  // GPT-2 style with n_ctx only: learned.
  m = info(R"({"model_type": "gpt2", "n_ctx": 2048, "n_embd": 64, "n_head": 4})");
  CHECK(m.position_table->max_len == 2048);
  m = info(preset_config("gemma-3-4b"));
  REQUIRE(m.rope);
  REQUIRE(m.rope_sliding);
  CHECK(m.rope->theta == 1000000.0);
  CHECK(m.rope_sliding->theta == 10000.0);
  m = info(preset_config("mistral-7b"));
  CHECK(m.sliding_window == 4096);
  m = info(preset_config("llama-4-scout"));
  REQUIRE(m.irope);
  CHECK(m.irope->chunk_size == 8192);
  CHECK(m.irope->rope_layers.size() == 48);
  CHECK(m.irope->rope_layers[2]);
  CHECK_FALSE(m.irope->rope_layers[3]);  // every 4th layer NoPE (HF's no_rope_layer_interval 4)
  double af = 0;
  CHECK(inv_freq(*m.rope, 0, &af).size() == 64);  // llama3 with low = high = 1 is valid
  m = info(preset_config("qwen2.5-vl-7b"));
  CHECK(m.rope->mrope_section == std::vector<std::size_t>{16, 24, 24});
  ModelInfo none;
  std::string detail;
  CHECK_FALSE(posenc::model_info_from_config(R"({"hidden_size": 64})", &none, &detail).ok());
  CHECK(detail.find("rope_theta") != std::string::npos);
}

TEST_CASE("alibi_bias and t5_bias: query_offset places the queries (0 = HF compute_bias, onnxruntime)") {
  const std::size_t q_len = 2, k_len = 5;
  std::vector<float> a(q_len * k_len), b(q_len * k_len);
  REQUIRE(posenc::alibi_bias(a.data(), 1, q_len, k_len, false, 8.0, 0).ok());
  // Head 0 of 1: slope 2^-8; query i at position i.
  for (std::size_t i = 0; i < q_len; ++i)
    for (std::size_t j = 0; j < k_len; ++j)
      CHECK(a[i * k_len + j] == doctest::Approx(-std::ldexp(1.0, -8) * std::fabs(double(i) - double(j))));
  REQUIRE(posenc::alibi_bias(b.data(), 1, q_len, k_len, false, 8.0).ok());  // default: k_len - q_len
  REQUIRE(posenc::alibi_bias(a.data(), 1, q_len, k_len, false, 8.0, k_len - q_len).ok());
  CHECK(a == b);
  CHECK(posenc::alibi_bias(a.data(), 1, k_len + 1, k_len, false).code == StatusCode::kBadArgument);

  std::vector<float> table(32);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  const posenc::T5BucketParams p;
  REQUIRE(posenc::t5_bias(a.data(), table.data(), 1, q_len, k_len, p, 0).ok());
  for (std::size_t i = 0; i < q_len; ++i)
    for (std::size_t j = 0; j < k_len; ++j)
      CHECK(a[i * k_len + j] ==
            static_cast<float>(posenc::t5_bucket(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i), p)));
}

namespace {

// ggml's CPU RoPE cache (ggml_rope_cache_init + rope_yarn, ggml-cpu/ops.cpp), transcribed from its
// published code in scalar float32: the independent twin of Precision::kGgml.
void ggml_cache_twin(const posenc::GgmlRope& g, float pos, std::vector<float>* c, std::vector<float>* s) {
  const float theta_scale = std::pow(g.freq_base, -2.0f / static_cast<float>(g.n_dims));
  float theta = pos;
  for (std::size_t i0 = 0; i0 < g.n_dims; i0 += 2) {
    const float ff = g.freq_factors.empty() ? 1.0f : g.freq_factors[i0 / 2];
    const float theta_extrap = theta / ff;
    const float theta_interp = g.freq_scale * theta_extrap;
    float th = theta_interp, mscale = g.attn_factor;
    if (g.ext_factor != 0.0f) {
      const float y = (static_cast<float>(i0 / 2) - g.corr_low) / std::max(0.001f, g.corr_high - g.corr_low);
      const float ramp_mix = (1 - std::min(1.0f, std::max(0.0f, y))) * g.ext_factor;
      th = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
      mscale *= 1.0f + 0.1f * std::log(1.0f / g.freq_scale);
    }
    (*c)[i0 / 2] = std::cos(th) * mscale;
    (*s)[i0 / 2] = std::sin(th) * mscale;
    theta *= theta_scale;
  }
}

}  // namespace

TEST_CASE("precision ggml: llama.cpp's parameters for each scheme, and ggml's angle to float32 rounding" * kKernels) {
  // Qwen2.5 YaRN: freq_scale 1/4, ext_factor 1, ggml's corr dims, attn_factor 1 (ggml adds 1 + 0.1 ln 4).
  RopeParams yarn = hf("qwen2.5-7b-yarn");
  posenc::GgmlRope g;
  REQUIRE(posenc::ggml_rope_params(yarn, 0, &g).ok());
  const double corr = [] {
    auto dim = [](double beta) {
      return 128 * std::log(32768 / (beta * 2 * 3.14159265358979323846)) / (2 * std::log(1e6));
    };
    return std::floor(dim(32)) * 1000 + std::ceil(dim(1));
  }();
  CHECK(g.n_dims == 128);
  CHECK(g.freq_scale == 0.25f);
  CHECK(g.ext_factor == 1.0f);
  CHECK(g.attn_factor == 1.0f);
  CHECK(g.corr_low * 1000 + g.corr_high == corr);
  CHECK(g.freq_factors.empty());

  // Llama 3.1: llama3 scaling becomes the converter's rope_freqs, freq_scale 1.
  REQUIRE(posenc::ggml_rope_params(hf("llama-3.1-8b"), 0, &g).ok());
  CHECK(g.freq_scale == 1.0f);
  CHECK(g.ext_factor == 0.0f);
  CHECK(g.freq_factors == llama3_rope_freqs(500000, 128, 8, 1, 4, 8192));

  // Phi-3.5 at a long context: the long factors, the LongRoPE gain as attn_factor.
  REQUIRE(posenc::ggml_rope_params(hf("phi-3.5-mini"), 8192, &g).ok());
  CHECK(g.freq_factors == json_floats("phi-3.5-mini", "long_factor"));
  CHECK(g.attn_factor == doctest::Approx(1.1902381).epsilon(1e-7));

  RopeParams prop;
  prop.head_dim = 64;
  prop.scaling = RopeScaling::kProportional;
  CHECK(posenc::ggml_rope_params(prop, 0, &g).code == StatusCode::kBadArgument);

  // The kernel against the twin, for every scheme llama.cpp runs, at small and large positions.
  RopeParams linear;
  linear.head_dim = 64;
  linear.scaling = RopeScaling::kLinear;
  linear.factor = 4.0;
  for (const RopeParams& p : {yarn, hf("llama-3.1-8b"), hf("phi-3.5-mini"), linear, hf("deepseek-v3")}) {
    REQUIRE(posenc::ggml_rope_params(p, 8192, &g).ok());
    const std::size_t half = g.n_dims / 2;
    const std::vector<double> positions = {0, 1, 7, 1000, 131071};
    std::vector<float> c(positions.size() * half), s(c.size()), tc(half), ts(half);
    posenc::RopeApplyOptions o;
    o.precision = posenc::Precision::kGgml;
    o.ggml = &g;
    REQUIRE(posenc::rope_cache(c.data(), s.data(), positions.size(), nullptr, g.n_dims, positions.data(), 0, o).ok());
    double worst = 0;
    for (std::size_t t = 0; t < positions.size(); ++t) {
      ggml_cache_twin(g, static_cast<float>(positions[t]), &tc, &ts);
      for (std::size_t k = 0; k < half; ++k)
        worst = std::fmax(worst, std::fmax(std::fabs(c[t * half + k] - tc[k]), std::fabs(s[t * half + k] - ts[k])));
    }
    CHECK(worst <= 4e-7 * 1.5);  // a few float32 ulps of |cos|, |sin| <= gain (< 1.5)
  }
}
