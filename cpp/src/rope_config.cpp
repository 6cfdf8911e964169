// Model configurations → RopeParams. nlohmann::json is used without exceptions: parse with
// allow_exceptions = false, and every value is type-checked before it is read.
#include "posenc/rope_config.hpp"

#include <cmath>
#include <cstdio>
#include <tuple>
#include <nlohmann/json.hpp>

#include "config_json.hpp"
#include "gguf_arch.hpp"

namespace posenc {
namespace {

using nlohmann::json;
using config_json::member;
using config_json::number;
using config_json::string;
using config_json::whole;

struct Reader {
  std::string* detail;

  Status fail(const char* message, const std::string& specifics) {
    if (detail != nullptr) *detail = specifics;
    return {StatusCode::kBadArgument, message};
  }
};

// HF's other names for the scaling types (rope_scaling_name gives the canonical ones).
constexpr struct {
  const char* name;
  RopeScaling scaling;
} kAliases[] = {
    {"default", RopeScaling::kNone},
    {"su", RopeScaling::kLongRope},
    {"mrope", RopeScaling::kNone},  // Qwen2-VL's rope_scaling type: default frequencies, M-RoPE sections
};

bool scaling_from_name(const std::string& name, RopeScaling* out) {
  for (int k = 0; k < kNumRopeScalings; ++k)
    if (name == rope_scaling_name(static_cast<RopeScaling>(k))) {
      *out = static_cast<RopeScaling>(k);
      return true;
    }
  for (const auto& a : kAliases)
    if (name == a.name) {
      *out = a.scaling;
      return true;
    }
  return false;
}

// "none, linear, ... (or default, su, mrope)": the names scaling_from_name takes, for messages.
std::string known_types() {
  std::string s;
  for (int k = 0; k < kNumRopeScalings; ++k)
    s += (k ? ", " : "") + std::string(rope_scaling_name(static_cast<RopeScaling>(k)));
  const char* sep = " (or ";
  for (const auto& a : kAliases) {
    s += sep + std::string(a.name);
    sep = ", ";
  }
  return s + ")";
}

// A number as %g writes it (16, 0.5, 1e+06), for messages.
std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Hugging Face models whose RoPE turns consecutive pairs (2i, 2i+1): rotate_every_two, an
// interleaving rotate_half, complex pairs or rope_interleave — read off transformers 5.12's
// modeling files. Every other model uses rotate_half's (i, i + d/2). "_text" configs (the
// language model of a multimodal one) count as their model.
bool hf_interleaved(std::string model_type) {
  static const char* const kInterleaved[] = {
      "blt",         "codegen",     "cohere",   "cohere2",      "cohere2_moe",     "deepseek_v2",
      "deepseek_v3", "deepseek_v4", "ernie4_5", "ernie4_5_moe", "ernie4_5_vl_moe", "glm",
      "glm4",        "glm4v",       "glm_ocr",  "gptj",         "helium",          "llama4",
  };
  if (model_type.size() > 5 && model_type.compare(model_type.size() - 5, 5, "_text") == 0)
    model_type.resize(model_type.size() - 5);
  for (const char* t : kInterleaved)
    if (model_type == t) return true;
  return false;
}

Status factor_list(Reader& r, const json& rp, const char* key, std::vector<double>* out) {
  const json* v = member(rp, key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array())
    return r.fail("config: a longrope factor list is not an array", std::string(key) + " must be an array of numbers");
  for (const auto& e : *v) {
    if (!e.is_number())
      return r.fail("config: a longrope factor list holds a non-number", std::string(key) + " must hold numbers only");
    out->push_back(e.get<double>());
  }
  return Status::Ok();
}

// ---- Hugging Face config.json ---------------------------------------------------------------------

// The head: head_dim, else qk_rope_head_dim, else hidden_size / num_attention_heads; DeepSeek's
// MLA split; the pair layout of the model type; max_position_embeddings.
Status hf_head(Reader& r, const json& cfg, RopeParams* p) {
  std::string model_type;
  if (string(cfg, "model_type", &model_type) && hf_interleaved(model_type)) p->layout = RopeLayout::kInterleaved;
  std::size_t n_heads = 0, hidden = 0, nope = 0, rope = 0;
  const bool have_heads = whole(cfg, "num_attention_heads", &n_heads) && n_heads > 0;
  const bool have_hidden = whole(cfg, "hidden_size", &hidden);
  if (whole(cfg, "qk_rope_head_dim", &rope) && rope > 0 && whole(cfg, "qk_nope_head_dim", &nope)) {
    // DeepSeek-V2/V3's MLA: a q/k head is [nope | rope]; HF splits it and rotates the rope part,
    // pairs interleaved (V2 as complex numbers, V3's rope_interleave, its default).
    p->head_dim = nope + rope;
    p->rot_dim = rope;
    p->rot_offset = nope;
    const json* il = member(cfg, "rope_interleave");
    p->layout =
        il != nullptr && il->is_boolean() && !il->get<bool>() ? RopeLayout::kHalfSplit : RopeLayout::kInterleaved;
  } else if (!(whole(cfg, "head_dim", &p->head_dim) && p->head_dim > 0) &&
             !(whole(cfg, "qk_rope_head_dim", &p->head_dim) && p->head_dim > 0)) {
    if (!have_heads || !have_hidden)
      return r.fail("config: head_dim is missing",
                    "config needs head_dim, qk_rope_head_dim, or hidden_size and num_attention_heads");
    p->head_dim = hidden / n_heads;
  }
  whole(cfg, "max_position_embeddings", &p->max_position_embeddings);
  return Status::Ok();
}

// The scaling dict: rope_parameters (flat, or one per layer type: the layer_type's), else the older
// rope_scaling, else an empty one.
Status hf_scaling_dict(Reader& r, const json& cfg, const std::string& layer_type, const json** rp, bool* per_layer) {
  static const json kEmpty = json::object();
  *rp = &kEmpty;
  *per_layer = false;
  if (const json* params = member(cfg, "rope_parameters"); params != nullptr && params->is_object()) {
    *per_layer = !(member(*params, "rope_type") || member(*params, "rope_theta") || member(*params, "type"));
    if (!*per_layer) {
      *rp = params;
    } else {
      std::string keys;
      for (const auto& item : params->items()) keys += (keys.empty() ? "" : ", ") + item.key();
      if (layer_type.empty())
        return r.fail("config: rope_parameters is per layer type; pass a layer type",
                      "rope_parameters has one entry per layer type; pass layerType (one of: " + keys + ")");
      const json* chosen = member(*params, layer_type.c_str());
      if (chosen == nullptr || !chosen->is_object())
        return r.fail("config: no rope_parameters for that layer type",
                      "rope_parameters has no entry \"" + layer_type + "\" (it has: " + keys + ")");
      *rp = chosen;
    }
  } else if (const json* scaling = member(cfg, "rope_scaling"); scaling != nullptr && scaling->is_object()) {
    *rp = scaling;
  }
  return Status::Ok();
}

// The scaling type's parameters from the dict rp (some also beside it, in cfg).
Status hf_scaling_fields(Reader& r, const json& cfg, const json& rp, RopeParams* p) {
  double v;
  if (number(rp, "factor", &v)) p->factor = v;
  if (!whole(rp, "original_max_position_embeddings", &p->original_max_position_embeddings))
    whole(cfg, "original_max_position_embeddings", &p->original_max_position_embeddings);
  if (p->scaling == RopeScaling::kYarn && p->original_max_position_embeddings == 0)
    p->original_max_position_embeddings = p->max_position_embeddings;  // HF's fallback
  // HF: rope_parameters.get("beta_fast") or 32 — a 0 means the default too.
  if (number(rp, "beta_fast", &v) && v != 0.0) p->beta_fast = v;
  if (number(rp, "beta_slow", &v) && v != 0.0) p->beta_slow = v;
  number(rp, "mscale", &p->mscale);
  number(rp, "mscale_all_dim", &p->mscale_all_dim);
  // HF reads attention_factor for yarn and longrope only (the other schemes' gain is 1).
  if ((p->scaling == RopeScaling::kYarn || p->scaling == RopeScaling::kLongRope) && number(rp, "attention_factor", &v))
    p->attention_factor = v;
  if (const json* t = member(rp, "truncate"); t != nullptr && t->is_boolean()) p->truncate = t->get<bool>();
  number(rp, "low_freq_factor", &p->low_freq_factor);
  number(rp, "high_freq_factor", &p->high_freq_factor);
  if (Status s = factor_list(r, rp, "short_factor", &p->short_factor); !s.ok()) return s;
  if (Status s = factor_list(r, rp, "long_factor", &p->long_factor); !s.ok()) return s;
  // M-RoPE (Qwen2-VL, Qwen2.5-VL; Qwen3-VL interleaved): pairs per temporal, height, width row.
  // (in the scaling dict, or — Qwen3.5-style — beside rope_theta in the text config)
  const json* mrope_home = member(rp, "mrope_section") != nullptr ? &rp : &cfg;
  if (const json* sec = member(*mrope_home, "mrope_section"); sec != nullptr) {
    if (!sec->is_array() || sec->size() != 3)
      return r.fail("config: mrope_section must list 3 pair counts",
                    "mrope_section must be an array of 3 whole numbers (t, h, w)");
    for (const auto& e : *sec) {
      if (!e.is_number_unsigned())
        return r.fail("config: mrope_section must list 3 pair counts", "mrope_section must hold whole numbers >= 0");
      p->mrope_section.push_back(e.get<std::size_t>());
    }
    if (const json* il = member(*mrope_home, "mrope_interleaved"); il != nullptr && il->is_boolean())
      p->mrope_interleaved = il->get<bool>();
  }
  return Status::Ok();
}

Status from_hugging_face(Reader& r, const json& root, const std::string& layer_type, RopeParams* p) {
  // Multimodal configs (Gemma 3, Llama 4, ...) keep the language model's settings in text_config.
  const json* text = member(root, "text_config");
  const json& cfg = text != nullptr && text->is_object() ? *text : root;
  if (Status s = hf_head(r, cfg, p); !s.ok()) return s;
  const json* rp = nullptr;
  bool per_layer = false;
  if (Status s = hf_scaling_dict(r, cfg, layer_type, &rp, &per_layer); !s.ok()) return s;

  p->theta = 10000.0;
  double local_theta;
  if (!per_layer && layer_type == "sliding_attention" && number(cfg, "rope_local_base_freq", &local_theta)) {
    // Gemma 3 (older format): sliding-window layers use rope_local_base_freq and no scaling.
    static const json kEmpty = json::object();
    p->theta = local_theta;
    rp = &kEmpty;
  } else if (!number(*rp, "rope_theta", &p->theta) && !number(cfg, "rope_theta", &p->theta)) {
    number(cfg, "rotary_emb_base", &p->theta);  // GPT-NeoX naming
  }

  if (!number(*rp, "partial_rotary_factor", &p->partial_rotary_factor) &&
      !number(cfg, "partial_rotary_factor", &p->partial_rotary_factor))
    number(cfg, "rotary_pct", &p->partial_rotary_factor);  // GPT-NeoX naming

  std::string type = "default";
  if (!string(*rp, "rope_type", &type)) string(*rp, "type", &type);
  if (!scaling_from_name(type, &p->scaling))
    return r.fail("config: unknown rope type", "rope type \"" + type + "\" is not one of: " + known_types());
  return hf_scaling_fields(r, cfg, *rp, p);
}

// ---- GGUF metadata ---------------------------------------------------------------------------------

// The metadata of one architecture: its keys are "{arch}.name".
struct GgufKeys {
  const json& root;
  std::string arch;
  std::vector<std::string>* warnings;  // may be null

  std::string key(const char* k) const { return arch + "." + k; }
  bool num(const char* k, double* out) const { return number(root, key(k).c_str(), out); }
  bool cnt(const char* k, std::size_t* out) const { return whole(root, key(k).c_str(), out); }
  void warn(const std::string& w) const {
    if (warnings != nullptr) warnings->push_back(w);
  }
};

// The head (attention.key_length_mla, else key_length, else embedding_length / head_count), the
// rotated dims and, for MLA, where they start.
Status gguf_head(Reader& r, const GgufKeys& m, RopeParams* p) {
  std::size_t n_heads = 0, embedding = 0;
  if (!(m.cnt("attention.key_length_mla", &p->head_dim) && p->head_dim > 0) &&
      !(m.cnt("attention.key_length", &p->head_dim) && p->head_dim > 0)) {
    if (!(m.cnt("attention.head_count", &n_heads) && n_heads > 0) || !m.cnt("embedding_length", &embedding))
      return r.fail("config: head size is missing", "GGUF metadata needs " + m.key("attention.key_length") + ", or " +
                                                        m.key("embedding_length") + " and " +
                                                        m.key("attention.head_count"));
    p->head_dim = embedding / n_heads;
  }
  std::size_t rot = 0, kv_lora_rank = 0;
  if (m.cnt("rope.dimension_count", &rot) && rot != p->head_dim) p->rot_dim = rot;
  if (p->rot_dim != 0 && p->rot_dim < p->head_dim &&
      (gguf_arch::rope_after_nope(m.arch) || m.cnt("attention.kv_lora_rank", &kv_lora_rank)))
    p->rot_offset = p->head_dim - p->rot_dim;  // MLA: q = [nope | rope], llama.cpp's q_pe view
  return Status::Ok();
}

// The architecture's pair layout, and M-RoPE's sections for the architectures that use them.
Status gguf_layout(Reader& r, const GgufKeys& m, RopeParams* p) {
  const gguf_arch::RopeType rope_type = gguf_arch::rope_type(m.arch);
  p->layout = rope_type == gguf_arch::RopeType::kNorm ? RopeLayout::kInterleaved : RopeLayout::kHalfSplit;
  if (rope_type == gguf_arch::RopeType::kUnknown)
    m.warn("llama.cpp's pair layout for architecture \"" + m.arch + "\" is not in posenc's table: half-split assumed");
  const json* sec = member(m.root, m.key("rope.dimension_sections").c_str());
  if (sec == nullptr) return Status::Ok();
  if (rope_type != gguf_arch::RopeType::kMrope && rope_type != gguf_arch::RopeType::kImrope) {
    m.warn(m.key("rope.dimension_sections") +
           " is ignored: llama.cpp uses M-RoPE sections for qwen2vl and qwen3vl only");
    return Status::Ok();
  }
  if (!sec->is_array() || sec->size() < 3 || sec->size() > 4)
    return r.fail("config: rope.dimension_sections must list 3 or 4 pair counts",
                  m.key("rope.dimension_sections") + " must be an array of 4 whole numbers (t, h, w, e)");
  for (std::size_t i = 0; i < sec->size(); ++i) {
    const json& e = (*sec)[i];
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() > (1 << 20))
      return r.fail("config: rope.dimension_sections must list 3 or 4 pair counts",
                    m.key("rope.dimension_sections") + " must hold whole numbers >= 0");
    if (i < 3) p->mrope_section.push_back(static_cast<std::size_t>(e.get<std::int64_t>()));
  }
  // ggml_rope_multi: the pairs outside t/h/w (the 4th section, and the ones IMROPE's pattern
  // leaves) turn by the 4th position id, which llama.cpp sets to 0 for text and images.
  p->mrope_interleaved = rope_type == gguf_arch::RopeType::kImrope;
  p->mrope_rest_unrotated = true;
  return Status::Ok();
}

// YaRN as llama.cpp runs it: its β (where the architecture reads them), the gain from
// yarn_log_multiplier, times rope.scaling.attn_factor when the file states one.
Status gguf_yarn(Reader& r, const GgufKeys& m, const double* attn_factor, RopeParams* p) {
  if (!p->factor)
    return r.fail("config: yarn needs rope.scaling.factor", "GGUF YaRN metadata needs " + m.key("rope.scaling.factor"));
  const bool betas = gguf_arch::reads_yarn_betas(m.arch);
  double v;
  for (const auto& [name, dst, dflt] : {std::tuple{"rope.scaling.yarn_beta_fast", &p->beta_fast, 32.0},
                                        std::tuple{"rope.scaling.yarn_beta_slow", &p->beta_slow, 1.0}}) {
    if (!m.num(name, &v) || v == 0.0 || v == dflt) continue;
    if (betas) *dst = v;
    else
      m.warn(m.key(name) + " = " + shortest(v) + " is ignored, as llama.cpp does for " + m.arch + ": it uses " +
             shortest(dflt));
  }
  if (m.num("rope.scaling.yarn_ext_factor", &v) && v != 1.0)
    m.warn(m.key("rope.scaling.yarn_ext_factor") + " is ignored: llama.cpp's YaRN runs with ext_factor 1");
  if (m.num("rope.scaling.yarn_attn_factor", &v))
    m.warn(m.key("rope.scaling.yarn_attn_factor") + " is ignored, as llama.cpp recomputes the YaRN gain");
  double log_mul = 0.0;
  if (m.num("rope.scaling.yarn_log_multiplier", &log_mul) && log_mul != 0.0) {
    p->mscale_all_dim = log_mul / 0.1;  // the converter stores 0.1 * mscale_all_dim
    p->mscale = (m.arch == "deepseek2" && p->mscale_all_dim != 1.0) ? p->mscale_all_dim : 1.0;
  }
  if (attn_factor != nullptr)
    p->attention_factor = yarn_attention_factor(*p->factor, p->mscale, p->mscale_all_dim) * *attn_factor;
  return Status::Ok();
}

// The scaling type (rope.scaling.type; absent means linear, and linear without a factor none), its
// factor, the original context and the gain.
Status gguf_scaling(Reader& r, const GgufKeys& m, std::size_t context, RopeParams* p) {
  double factor = 0.0;
  if (!m.num("rope.scaling.factor", &factor)) m.num("rope.scale_linear", &factor);
  std::string type = "linear";
  string(m.root, m.key("rope.scaling.type").c_str(), &type);
  if (type == "linear" && factor == 0.0) type = "none";
  if (type != "none" && type != "linear" && type != "yarn" && type != "longrope")
    return r.fail("config: unknown rope type",
                  "rope scaling type \"" + type + "\" is not one of llama.cpp's: none, linear, yarn, longrope");
  scaling_from_name(type, &p->scaling);
  if (p->scaling != RopeScaling::kNone) {
    if (factor != 0.0) p->factor = factor;
  } else if (factor != 0.0 && factor != 1.0) {
    m.warn(m.key("rope.scaling.factor") + " is ignored: the scaling type is none");
  }

  if (!m.cnt("rope.scaling.original_context_length", &p->original_max_position_embeddings))
    p->original_max_position_embeddings = context;  // llama.cpp's n_ctx_orig_yarn fallback
  double attn_factor = 1.0;
  const bool have_attn_factor = m.num("rope.scaling.attn_factor", &attn_factor);
  if (have_attn_factor && !(std::isfinite(attn_factor) && attn_factor > 0.0))
    return r.fail("config: rope.scaling.attn_factor must be > 0",
                  m.key("rope.scaling.attn_factor") + " must be finite and > 0");
  if (p->scaling == RopeScaling::kYarn) return gguf_yarn(r, m, have_attn_factor ? &attn_factor : nullptr, p);
  // LongRoPE's factors are tensors (rope_factors_long/short.weight): read_gguf supplies them. Phi-3
  // GGUFs have no scaling type and an attention factor.
  if (have_attn_factor) p->attention_factor = attn_factor;
  return Status::Ok();
}

// GGUF metadata → RopeParams, as llama.cpp's load_hparams and llama_context derive them:
// - the head: attention.key_length_mla (DeepSeek converted for absorbed MLA), else key_length,
//   else embedding_length / head_count; rope.dimension_count rotated dims; MLA models (DeepSeek-V2/V3
//   and others with attention.kv_lora_rank) rope the last dimension_count dims, after the nope part;
// - the pair layout is the architecture's (llama_model_rope_type, gguf_arch.cpp), M-RoPE's
//   sections rope.dimension_sections [t, h, w, e];
// - rope.scaling.type absent means "linear"; its factor is rope.scaling.factor (else the older
//   rope.scale_linear), and no factor means none (freq_scale 1).
// - YaRN's original context is rope.scaling.original_context_length, else {arch}.context_length.
// - The cos/sin gain: YaRN's get_mscale(f, mscale) / get_mscale(f, mscale_all_dim) where a
//   rope.scaling.yarn_log_multiplier is stored as 0.1 * mscale_all_dim (DeepSeek-V2/V3:
//   mscale = mscale_all_dim, so the RoPE gain is 1 and the temperature goes into the softmax
//   scale); else get_mscale(f) for YaRN and 1 otherwise; times rope.scaling.attn_factor (Phi-3).
// - Per-pair tensors (rope_freqs, rope_factors_long/short) are read by read_gguf, not here.
Status from_gguf(Reader& r, const json& root, const std::string& layer_type, RopeParams* p,
                 std::vector<std::string>* warnings) {
  std::string arch;
  if (!string(root, "general.architecture", &arch))
    return r.fail("config: general.architecture is missing",
                  "GGUF metadata needs general.architecture (e.g. \"llama\")");
  const GgufKeys m{root, arch, warnings};
  if (Status s = gguf_head(r, m, p); !s.ok()) return s;
  if (Status s = gguf_layout(r, m, p); !s.ok()) return s;
  std::size_t context = 0;
  m.cnt("context_length", &context);
  p->max_position_embeddings = context;

  p->theta = 10000.0;
  m.num("rope.freq_base", &p->theta);
  double v;
  if (layer_type == "sliding_attention" && m.num("rope.freq_base_swa", &v)) {
    p->theta = v;
    return Status::Ok();  // llama.cpp applies no context scaling to sliding-window layers
  }
  return gguf_scaling(r, m, context, p);
}

}  // namespace

namespace config_json {

Status rope_params_from_hf(const json& root, const std::string& layer_type, RopeParams* p, std::string* detail) {
  Reader r{detail};
  return from_hugging_face(r, root, layer_type, p);
}

Status rope_params_from_gguf(const json& meta, const std::string& layer_type, RopeParams* p, std::string* detail,
                             std::vector<std::string>* warnings) {
  Reader r{detail};
  return from_gguf(r, meta, layer_type, p, warnings);
}

void gguf_longrope(const json& meta, const std::string& arch, std::vector<double> short_factor,
                   std::vector<double> long_factor, RopeParams* p, std::vector<std::string>* warnings) {
  p->scaling = RopeScaling::kLongRope;
  p->short_factor = std::move(short_factor);
  p->long_factor = std::move(long_factor);
  p->factor.reset();  // llama.cpp's LongRoPE has freq_scale 1: the factors are the whole scaling
  double attn_factor = 1.0;
  if (!number(meta, (arch + ".rope.scaling.attn_factor").c_str(), &attn_factor) && warnings != nullptr)
    warnings->push_back(arch + ".rope.scaling.attn_factor is missing: the LongRoPE gain is 1, as in llama.cpp");
  p->attention_factor = attn_factor;
  // llama.cpp picks the long factors when its context (n_ctx per sequence) exceeds the original
  // one; the file's training context stands in for it until the caller says otherwise.
  p->context_length = p->max_position_embeddings;
}

}  // namespace config_json

Status rope_params_from_config(std::string_view json_text, const ConfigOptions& options, RopeParams* params,
                               std::string* detail) noexcept {
  Reader r{detail};
  if (params == nullptr) return {StatusCode::kBadArgument, "params must not be null"};
  try {
    if (!config_json::nesting_ok(json_text, 64))
      return r.fail("config: nested too deeply", "the config nests deeper than 64 levels");
    const json root = json::parse(json_text.begin(), json_text.end(), nullptr, false);
    if (root.is_discarded()) return r.fail("config: not valid JSON", "the config text is not valid JSON");
    if (!root.is_object()) return r.fail("config: not a JSON object", "the config must be a JSON object");
    RopeParams p;
    const Status s = options.dialect == ConfigDialect::kGguf ? from_gguf(r, root, options.layer_type, &p, nullptr)
                                                             : from_hugging_face(r, root, options.layer_type, &p);
    if (s.ok()) *params = std::move(p);
    return s;
  } catch (...) {  // std::bad_alloc only: every read above is type-checked
    return {StatusCode::kTooLarge, "config: out of memory"};
  }
}

}  // namespace posenc
