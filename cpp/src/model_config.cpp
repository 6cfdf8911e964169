// config.json → ModelInfo: which positional scheme a Hugging Face config describes, and its
// settings. Learned tables (GPT-2's n_positions, BERT's position_embedding_type "absolute", OPT,
// ...), ALiBi (BLOOM, MPT's attn_config.alibi, Falcon's alibi), T5 (relative_attention_*), else
// RoPE as rope_params_from_config reads it — or a refusal naming the keys it looked for.
#include <nlohmann/json.hpp>

#include "config_json.hpp"
#include "posenc/model_file.hpp"

namespace posenc {
namespace {

using nlohmann::json;
using config_json::member;
using config_json::whole;

// The first of several keys that holds a whole number.
bool first_whole(const json& o, std::initializer_list<const char*> keys, std::size_t* out) {
  for (const char* k : keys)
    if (whole(o, k, out)) return true;
  return false;
}

bool flag(const json& o, const char* key) {
  const json* v = member(o, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

std::string text(const json& o, const char* key) {
  std::string s;
  config_json::string(o, key, &s);
  return s;
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

Status refuse(std::string* detail, const std::string& why) {
  if (detail != nullptr) *detail = why;
  return {StatusCode::kBadArgument, "config: the positional scheme is not recognised"};
}

// What every config states whatever its scheme: the model type and sizes.
void describe(const json& root, const json& cfg, ModelInfo* info) {
  info->format = ModelFormat::kConfig;
  info->architecture = text(cfg, "model_type");
  if (info->architecture.empty()) info->architecture = text(root, "model_type");
  first_whole(cfg, {"num_attention_heads", "n_head", "n_heads", "num_heads"}, &info->n_heads);
  first_whole(cfg, {"num_key_value_heads", "n_head_kv", "num_kv_heads"}, &info->n_kv_heads);
  first_whole(cfg, {"max_position_embeddings", "n_positions", "max_seq_len", "n_ctx", "seq_length"},
              &info->context_length);
  std::size_t window = 0;
  if (whole(cfg, "sliding_window", &window)) info->sliding_window = window;
  first_whole(cfg, {"hidden_size", "n_embd", "d_model", "dim"}, &info->d_model);
}

// ---- one detector per scheme, tried in this order: true when the config is of its scheme ----------

// ALiBi: BLOOM, MPT (attn_config.alibi, which HF's MptAttentionConfig defaults to true when
// absent), Falcon's alibi.
bool detect_alibi(const json& cfg, ModelInfo* info) {
  const std::string& type = info->architecture;
  const json* attn_config = member(cfg, "attn_config");
  const json* mpt_flag = attn_config != nullptr ? member(*attn_config, "alibi") : nullptr;
  const bool mpt_alibi = (attn_config != nullptr && flag(*attn_config, "alibi")) ||
                         (type == "mpt" && (mpt_flag == nullptr || !mpt_flag->is_boolean()));
  if (!(type == "bloom" || mpt_alibi || flag(cfg, "alibi"))) return false;
  AlibiInfo a;
  a.n_heads = info->n_heads;
  if (mpt_alibi && attn_config != nullptr) {
    const json* m = member(*attn_config, "alibi_bias_max");
    if (m != nullptr && m->is_number() && m->get<double>() > 0) a.max_bias = m->get<double>();
  }
  if (a.n_heads == 0)
    info->warnings.push_back("no head count (num_attention_heads, n_head or n_heads): ALiBi needs it");
  info->alibi = a;
  return true;
}

// T5: relative_attention_* (or a T5 model type).
bool detect_t5(const json& cfg, ModelInfo* info) {
  if (member(cfg, "relative_attention_num_buckets") == nullptr &&
      !one_of(info->architecture, {"t5", "mt5", "umt5", "longt5"}))
    return false;
  T5Info t5;
  t5.n_heads = info->n_heads;
  std::size_t v = 0;
  if (whole(cfg, "relative_attention_num_buckets", &v) && v <= (1u << 20)) t5.num_buckets = static_cast<int>(v);
  if (whole(cfg, "relative_attention_max_distance", &v) && v <= (1u << 30)) t5.max_distance = static_cast<int>(v);
  else info->warnings.push_back("relative_attention_max_distance is missing: T5's default 128");
  info->t5 = t5;
  return true;
}

// Learned tables: GPT-2's n_positions, BERT's position_embedding_type "absolute", and the model
// types known to learn theirs.
bool detect_learned(const json& cfg, ModelInfo* info, Status* status, std::string* detail) {
  const std::string& type = info->architecture;
  if (!(member(cfg, "n_positions") != nullptr || text(cfg, "position_embedding_type") == "absolute" ||
        one_of(type, {"gpt2", "bert", "roberta", "xlm-roberta", "distilbert", "electra", "opt", "gpt_neo", "bart",
                      "mbart", "camembert", "albert", "deberta"})))
    return false;
  PositionTable table;
  if (!first_whole(cfg, {"n_positions", "max_position_embeddings", "n_ctx"}, &table.max_len)) {
    *status = refuse(detail, "a learned-position config needs n_positions or max_position_embeddings");
    return true;
  }
  table.d_model = info->d_model;
  if (type == "opt") info->warnings.push_back("OPT's table has 2 extra rows: position p is row p + 2");
  if (one_of(type, {"roberta", "xlm-roberta", "camembert"}))
    info->warnings.push_back("RoBERTa's table starts after the padding index: position p is row p + pad_token_id + 1");
  info->position_table = std::move(table);
  return true;
}

// Llama 4's iRoPE: chunked RoPE layers and temperature-tuned NoPE layers.
void detect_irope(const json& cfg, ModelInfo* info) {
  const std::string& type = info->architecture;
  if (!(member(cfg, "attention_chunk_size") || member(cfg, "no_rope_layers") || type == "llama4" ||
        type == "llama4_text"))
    return;
  IropeInfo r;
  whole(cfg, "attention_chunk_size", &r.chunk_size);
  if (const json* v = member(cfg, "floor_scale"); v && v->is_number() && v->get<double>() > 0)
    r.floor_scale = v->get<double>();
  if (const json* v = member(cfg, "attn_scale"); v && v->is_number()) r.attn_scale = v->get<double>();
  if (const json* v = member(cfg, "attn_temperature_tuning"); v && (v->is_boolean() || v->is_number()))
    r.temperature_tuning = v->is_boolean() ? v->get<bool>() : v->get<double>() != 0;
  std::size_t layers = 0, interval = 4;
  whole(cfg, "num_hidden_layers", &layers);
  whole(cfg, "no_rope_layer_interval", &interval);
  const json* list = member(cfg, "no_rope_layers");
  if (list != nullptr && list->is_array() && !list->empty()) {
    for (const auto& e : *list) r.rope_layers.push_back(e.is_number() && e.get<double>() != 0);
  } else if (layers > 0 && layers <= (1u << 16) && interval > 0) {
    for (std::size_t l = 0; l < layers; ++l) r.rope_layers.push_back((l + 1) % interval != 0);  // HF's default
  }
  info->irope = std::move(r);
}

// RoPE, as rope_params_from_config reads it: the rest, unless the config names no RoPE key and no
// model type (then it is refused, naming the keys looked for).
Status detect_rope(const json& root, const json& cfg, ModelInfo* info, std::string* detail) {
  const bool rope_keys = member(cfg, "rope_theta") || member(cfg, "rope_scaling") || member(cfg, "rope_parameters") ||
                         member(cfg, "rotary_emb_base") || member(cfg, "rotary_pct") ||
                         member(cfg, "partial_rotary_factor") || member(cfg, "qk_rope_head_dim");
  if (!rope_keys && info->architecture.empty())
    return refuse(detail,
                  "found none of: model_type, rope_theta, rope_scaling, rope_parameters (RoPE), n_positions, "
                  "position_embedding_type (learned), alibi, attn_config.alibi (ALiBi), "
                  "relative_attention_num_buckets (T5)");
  RopeParams p;
  std::string why;
  // Per-layer-type configs (Gemma 3): the full-attention layers, and the sliding ones apart.
  const json* params = member(cfg, "rope_parameters");
  const bool per_layer = params != nullptr && params->is_object() && member(*params, "full_attention") != nullptr;
  const bool local_base = member(cfg, "rope_local_base_freq") != nullptr;
  Status s = config_json::rope_params_from_hf(root, per_layer || local_base ? "full_attention" : "", &p, &why);
  if (!s.ok()) {
    if (detail != nullptr) *detail = why;
    return s;
  }
  info->rope = std::move(p);
  detect_irope(cfg, info);
  if (per_layer || local_base) {
    RopeParams q;
    if (config_json::rope_params_from_hf(root, "sliding_attention", &q, &why).ok()) info->rope_sliding = std::move(q);
  }
  return Status::Ok();
}

}  // namespace

Status model_info_from_config(std::string_view json_text, ModelInfo* out, std::string* detail) noexcept {
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  try {
    if (!config_json::nesting_ok(json_text, 64)) return refuse(detail, "the config nests deeper than 64 levels");
    const json root = json::parse(json_text.begin(), json_text.end(), nullptr, false);
    if (root.is_discarded()) return refuse(detail, "the config text is not valid JSON");
    if (!root.is_object()) return refuse(detail, "the config must be a JSON object");
    const json* text_config = member(root, "text_config");
    const json& cfg = text_config != nullptr && text_config->is_object() ? *text_config : root;

    ModelInfo info;
    describe(root, cfg, &info);
    Status s = Status::Ok();
    if (!detect_alibi(cfg, &info) && !detect_t5(cfg, &info) && !detect_learned(cfg, &info, &s, detail))
      s = detect_rope(root, cfg, &info, detail);
    if (!s.ok()) return s;
    *out = std::move(info);
    return Status::Ok();
  } catch (...) {  // std::bad_alloc
    return {StatusCode::kTooLarge, "config: out of memory"};
  }
}

}  // namespace posenc
