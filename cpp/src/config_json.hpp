// Internal: the JSON readers the config and model-file readers share: a nesting check, field
// readers (config_json.cpp), and the RoPE readers over an already parsed JSON object
// (rope_config.cpp), which rope_params_from_config and the model-file readers (gguf.cpp,
// model_config.cpp) call.
#pragma once

#include <cstddef>
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

// Fields of a JSON object, each type-checked before it is read (config_json.cpp): member is the
// field, or null when it is absent or null; number, whole and string are false when it is absent
// or of another type.
const nlohmann::json* member(const nlohmann::json& object, const char* key);
bool number(const nlohmann::json& object, const char* key, double* out);
// A number that is a whole number in [0, 2^40] (and that size_t holds: 32 bits in WASM).
bool whole(const nlohmann::json& object, const char* key, std::size_t* out);
bool string(const nlohmann::json& object, const char* key, std::string* out);

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
