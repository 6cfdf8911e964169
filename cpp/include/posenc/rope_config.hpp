// posenc: RoPE parameters read from model configurations (config.json, GGUF metadata).
#pragma once

#include <string>
#include <string_view>

#include "posenc/rope.hpp"
#include "posenc/status.hpp"

namespace posenc {

enum class ConfigDialect : int {
  kHuggingFace = 0,  // a parsed config.json: rope_theta + rope_scaling ("type" or "rope_type"), or
                     // rope_parameters (flat or per layer type); partial_rotary_factor; head_dim,
                     // else qk_rope_head_dim (DeepSeek MLA), else hidden_size / num_attention_heads;
                     // max_position_embeddings; original_max_position_embeddings; text_config.
  kGguf = 1,         // GGUF metadata as a JSON object of key → value: general.architecture,
                     // {arch}.rope.freq_base, .rope.dimension_count, .rope.scaling.type/.factor/
                     // .original_context_length/.yarn_beta_fast/.yarn_beta_slow/.yarn_log_multiplier/
                     // .attn_factor, .attention.key_length, .embedding_length, .attention.head_count,
                     // .context_length, .rope.freq_base_swa.
};

struct ConfigOptions {
  ConfigDialect dialect = ConfigDialect::kHuggingFace;
  // For configs whose RoPE differs per layer type (Gemma 3: "full_attention" / "sliding_attention").
  std::string layer_type;
};

// Fills *params from the JSON text of a model configuration. Never throws.
// Status: kBadArgument with a static message; *detail (if given) then holds the specifics, e.g.
// `rope_scaling.rope_type "foo" is not one of: default, linear, ...` or the JSON parse position.
Status rope_params_from_config(std::string_view json_text, const ConfigOptions& options, RopeParams* params,
                               std::string* detail = nullptr) noexcept;

}  // namespace posenc
