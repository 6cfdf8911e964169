// The JSON readers the config and model-file readers share (config_json.hpp).
#include "config_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace posenc::config_json {

using nlohmann::json;

bool nesting_ok(std::string_view text, int max_depth) noexcept {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      if (++depth > max_depth) return false;
    } else if (ch == '}' || ch == ']') {
      --depth;
    }
  }
  return true;
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool number(const json& object, const char* key, double* out) {
  const json* v = member(object, key);
  if (v == nullptr || !v->is_number()) return false;
  *out = v->get<double>();
  return true;
}

// The largest whole() takes: 2^40, or what size_t holds (2^32 − 1 in WASM).
const double kWholeMax = std::min(1099511627776.0, static_cast<double>(std::numeric_limits<std::size_t>::max()));

bool whole(const json& object, const char* key, std::size_t* out) {
  double v;
  if (!number(object, key, &v) || !(v >= 0.0 && v <= kWholeMax) || std::floor(v) != v) return false;
  *out = static_cast<std::size_t>(v);
  return true;
}

bool string(const json& object, const char* key, std::string* out) {
  const json* v = member(object, key);
  if (v == nullptr || !v->is_string()) return false;
  *out = v->get<std::string>();
  return true;
}

namespace {

enum class Rule { kWhole, kNumber };

// The numeric keys the readers take (rope_config.cpp, model_config.cpp) and their rule: at the
// top level (or text_config) and in a RoPE group (rope_scaling, rope_parameters).
struct Field {
  const char* key;
  Rule rule;
};
constexpr Field kTopFields[] = {
    {"num_attention_heads", Rule::kWhole},
    {"n_head", Rule::kWhole},
    {"n_heads", Rule::kWhole},
    {"num_heads", Rule::kWhole},
    {"num_key_value_heads", Rule::kWhole},
    {"n_head_kv", Rule::kWhole},
    {"num_kv_heads", Rule::kWhole},
    {"max_position_embeddings", Rule::kWhole},
    {"n_positions", Rule::kWhole},
    {"max_seq_len", Rule::kWhole},
    {"n_ctx", Rule::kWhole},
    {"seq_length", Rule::kWhole},
    {"sliding_window", Rule::kWhole},
    {"hidden_size", Rule::kWhole},
    {"n_embd", Rule::kWhole},
    {"d_model", Rule::kWhole},
    {"head_dim", Rule::kWhole},
    {"qk_rope_head_dim", Rule::kWhole},
    {"qk_nope_head_dim", Rule::kWhole},
    {"original_max_position_embeddings", Rule::kWhole},
    {"relative_attention_num_buckets", Rule::kWhole},
    {"relative_attention_max_distance", Rule::kWhole},
    {"attention_chunk_size", Rule::kWhole},
    {"num_hidden_layers", Rule::kWhole},
    {"no_rope_layer_interval", Rule::kWhole},
    {"rope_theta", Rule::kNumber},
    {"rotary_emb_base", Rule::kNumber},
    {"partial_rotary_factor", Rule::kNumber},
    {"rotary_pct", Rule::kNumber},
    {"rope_local_base_freq", Rule::kNumber},
    {"floor_scale", Rule::kNumber},
    {"attn_scale", Rule::kNumber},
};
constexpr Field kRopeFields[] = {
    {"factor", Rule::kNumber},
    {"beta_fast", Rule::kNumber},
    {"beta_slow", Rule::kNumber},
    {"mscale", Rule::kNumber},
    {"mscale_all_dim", Rule::kNumber},
    {"attention_factor", Rule::kNumber},
    {"low_freq_factor", Rule::kNumber},
    {"high_freq_factor", Rule::kNumber},
    {"rope_theta", Rule::kNumber},
    {"partial_rotary_factor", Rule::kNumber},
    {"original_max_position_embeddings", Rule::kWhole},
};

std::string whole_max() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", kWholeMax);
  return buf;
}

// The value as the message shows it: its JSON, cut at 40 characters.
std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

template <std::size_t N>
bool check_group(const json& object, const std::string& prefix, const Field (&fields)[N], std::string* detail) {
  for (const auto& f : fields) {
    const json* v = member(object, f.key);
    if (v == nullptr) continue;
    double d = 0.0;
    std::size_t n = 0;
    const bool ok = f.rule == Rule::kWhole ? whole(object, f.key, &n) : number(object, f.key, &d) && std::isfinite(d);
    if (ok) continue;
    if (detail != nullptr)
      *detail = prefix + f.key +
                (f.rule == Rule::kWhole ? " must be a whole number in [0, " + whole_max() + "]"
                                        : " must be a finite number") +
                " (got " + shown(*v) + ")";
    return false;
  }
  return true;
}

bool check_rope_group(const json& cfg, const char* key, const std::string& prefix, std::string* detail) {
  const json* g = member(cfg, key);
  if (g == nullptr || !g->is_object()) return true;
  const std::string here = prefix + key + ".";
  if (!check_group(*g, here, kRopeFields, detail)) return false;
  for (const char* layer : {"full_attention", "sliding_attention"}) {  // per-layer-type (Gemma 3)
    const json* l = member(*g, layer);
    if (l != nullptr && l->is_object() && !check_group(*l, here + layer + ".", kRopeFields, detail)) return false;
  }
  return true;
}

}  // namespace

Status check_fields(const json& root, std::string* detail) {
  const Status bad{StatusCode::kBadArgument, "config: a field has the wrong type or is out of range"};
  const json* text_config = member(root, "text_config");
  for (const auto& [cfg, prefix] :
       {std::pair{&root, std::string()}, std::pair{text_config, std::string("text_config.")}}) {
    if (cfg == nullptr || !cfg->is_object()) continue;
    if (!check_group(*cfg, prefix, kTopFields, detail)) return bad;
    for (const char* group : {"rope_scaling", "rope_parameters"})
      if (!check_rope_group(*cfg, group, prefix, detail)) return bad;
  }
  return Status::Ok();
}

}  // namespace posenc::config_json
