// llama.cpp's per-architecture RoPE decisions (gguf_arch.hpp). The names are general.architecture
// values as gguf-py writes them; the types are llama_model_rope_type's cases.
#include "gguf_arch.hpp"

#include <algorithm>
#include <iterator>

namespace posenc::gguf_arch {
namespace {

struct Entry {
  std::string_view arch;
  RopeType type;
};

constexpr RopeType N = RopeType::kNone, R = RopeType::kNorm, X = RopeType::kNeox;

// clang-format off: the architectures grouped by type, a few a line
constexpr Entry kTable[] = {
    // no RoPE
    {"clip", N},
    {"gpt2", N},
    {"gptj", N},
    {"mpt", N},
    {"refact", N},
    {"bloom", N},
    {"mamba", N},
    {"mamba2", N},
    {"jamba", N},
    {"jina-bert-v2", N},
    {"t5", N},
    {"t5encoder", N},
    {"jais", N},
    {"rwkv6", N},
    {"rwkv6qwen2", N},
    {"rwkv7", N},
    {"arwkv7", N},
    {"wavtokenizer-dec", N},
    {"nemotron_h", N},
    // NORM: consecutive pairs (llama.cpp's converter permutes these models' HF Q/K weights)
    {"llama", R},
    {"llada", R},
    {"llama4", R},
    {"deci", R},
    {"baichuan", R},
    {"starcoder", R},
    {"internlm2", R},
    {"minicpm", R},
    {"xverse", R},
    {"command-r", R},
    {"cohere2", R},
    {"olmo", R},
    {"arctic", R},
    {"deepseek", R},
    {"deepseek2", R},
    {"plm", R},
    {"chatglm", R},
    {"glm4", R},
    {"granite", R},
    {"granitemoe", R},
    {"granitehybrid", R},
    {"chameleon", R},
    {"bailingmoe", R},
    {"neo-bert", R},
    {"smollm3", R},
    {"arcee", R},
    {"ernie4_5", R},
    {"ernie4_5-moe", R},
    // NEOX: pairs n_rot/2 apart
    {"falcon", X},
    {"falcon-h1", X},
    {"grok", X},
    {"dbrx", X},
    {"bert", X},
    {"jina-bert-v3", X},
    {"nomic-bert", X},
    {"nomic-bert-moe", X},
    {"stablelm", X},
    {"bitnet", X},
    {"qwen", X},
    {"qwen2", X},
    {"dream", X},
    {"qwen2moe", X},
    {"qwen3", X},
    {"qwen3moe", X},
    {"qwen3next", X},
    {"llada-moe", X},
    {"olmo2", X},
    {"olmoe", X},
    {"phi2", X},
    {"phi3", X},
    {"phimoe", X},
    {"plamo", X},
    {"plamo2", X},
    {"gemma", X},
    {"gemma2", X},
    {"gemma3", X},
    {"gemma3n", X},
    {"gemma-embedding", X},
    {"starcoder2", X},
    {"openelm", X},
    {"gptneox", X},
    {"codeshell", X},
    {"orion", X},
    {"nemotron", X},
    {"exaone", X},
    {"exaone4", X},
    {"minicpm3", X},
    {"bailingmoe2", X},
    {"dots1", X},
    {"hunyuan-moe", X},
    {"gpt-oss", X},
    {"hunyuan-dense", X},
    {"lfm2", X},
    {"lfm2moe", X},
    {"smallthinker", X},
    {"glm4moe", X},
    {"seed_oss", X},
    {"grovemoe", X},
    {"apertus", X},
    // multi-axis
    {"qwen2vl", RopeType::kMrope},
    {"qwen3vl", RopeType::kImrope},
    {"qwen3vlmoe", RopeType::kImrope},
};
// clang-format on

}  // namespace

RopeType rope_type(std::string_view arch) noexcept {
  const auto it = std::find_if(std::begin(kTable), std::end(kTable), [&](const Entry& e) { return e.arch == arch; });
  return it == std::end(kTable) ? RopeType::kUnknown : it->type;
}

bool rope_after_nope(std::string_view arch) noexcept {
  return arch == "deepseek2" || arch == "minicpm3" || arch == "plm";
}

bool reads_yarn_betas(std::string_view arch) noexcept { return arch == "grok"; }

}  // namespace posenc::gguf_arch
