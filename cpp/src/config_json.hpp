// Internal: the config readers over an already parsed JSON object, shared by rope_config.cpp
// (rope_params_from_config) and the model-file readers (gguf.cpp, model_config.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "posenc/rope.hpp"
#include "posenc/status.hpp"

namespace posenc::config_json {

// Whether JSON text nests objects/arrays at most max_depth deep (outside strings). Checked before
// parsing untrusted text: a deeply nested document would exhaust the stack when freed.
bool nesting_ok(std::string_view text, int max_depth) noexcept;

// Hugging Face config.json (see ConfigDialect::kHuggingFace).
Status rope_params_from_hf(const nlohmann::json& root, const std::string& layer_type, RopeParams* p,
                           std::string* detail);

// GGUF metadata as key → value (see ConfigDialect::kGguf); warnings (may be null) gets what was
// read but not applied.
Status rope_params_from_gguf(const nlohmann::json& meta, const std::string& layer_type, RopeParams* p,
                             std::string* detail, std::vector<std::string>* warnings);

// A GGUF's rope_factors_short/long tensors turn p into llama.cpp's LongRoPE: the factors, the
// gain rope.scaling.attn_factor (1 when absent, as llama.cpp), and the switch on the context length.
void gguf_longrope(const nlohmann::json& meta, const std::string& arch, std::vector<double> short_factor,
                   std::vector<double> long_factor, RopeParams* p, std::vector<std::string>* warnings);

}  // namespace posenc::config_json
