// Internal: what llama.cpp decides per architecture (general.architecture) rather than from a
// GGUF's keys, for the RoPE it runs: the pair layout (llama_model_rope_type) and which files'
// YaRN β keys it reads. Facts from llama.cpp's src/llama-model.cpp and checked against the real
// libllama by tests/llamacpp/ for the architectures that suite writes.
#pragma once

#include <string_view>

namespace posenc::gguf_arch {

enum class RopeType {
  kUnknown,  // not in posenc's table (llama.cpp has many architectures; new ones appear monthly)
  kNone,     // no RoPE (GPT-2, BLOOM, MPT, T5, RWKV, Mamba, ...)
  kNorm,     // LLAMA_ROPE_TYPE_NORM: pairs (2i, 2i+1)
  kNeox,     // LLAMA_ROPE_TYPE_NEOX: pairs (i, i + n_rot/2)
  kMrope,    // LLAMA_ROPE_TYPE_MROPE (Qwen2-VL): NEOX pairs in t/h/w sections
  kImrope,   // LLAMA_ROPE_TYPE_IMROPE (Qwen3-VL): NEOX pairs, sections interleaved
};

RopeType rope_type(std::string_view arch) noexcept;

// Whether the architecture's q/k heads are [nope | rope] with RoPE on the last rope.dimension_count
// dims (DeepSeek-V2/V3's multi-head latent attention and the models built like it). Files of other
// architectures that state attention.kv_lora_rank are taken as MLA too.
bool rope_after_nope(std::string_view arch) noexcept;

// Whether llama.cpp reads {arch}.rope.scaling.yarn_beta_fast / _slow for this architecture; for
// the others it uses 32 / 1 whatever the file says.
bool reads_yarn_betas(std::string_view arch) noexcept;

}  // namespace posenc::gguf_arch
