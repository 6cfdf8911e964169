// The lab model: its configuration checks, parameter tensors and initialisation, and the public
// calls that wrap the passes (forward.cpp) with argument checks. Nothing throws past these
// functions: std::bad_alloc becomes StatusCode::kTooLarge.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <new>

#include "lab/model.hpp"
#include "lab/rng.hpp"
#include "posenc/alibi.hpp"
#include "refusals.hpp"

namespace posenc::lab {
namespace {

constexpr const char* kSchemeNames[kNumSchemes] = {
    "none", "sinusoidal", "learned", "rope",  "alibi",         "t5",     "xpos",         "kerple_log", "kerple_power",
    "fire", "cope",       "p_rope",  "irope", "nope_interval", "gemma3", "swa_rope_nope"};
// "scheme must be one of none, sinusoidal, …", from the names above.
const char* scheme_list() {
  static const std::string list = [] {
    std::string s = "scheme must be one of ";
    for (std::size_t i = 0; i < kNumSchemes; ++i) s += (i ? ", " : "") + std::string(kSchemeNames[i]);
    return s;
  }();
  return list.c_str();
}
// Limits that keep every product of sizes far from overflow and the model "tiny" (a row's: kMaxSeqLen;
// the vocabulary's: kMaxVocab, lab.hpp).
constexpr std::size_t kMaxDModel = 4096, kMaxLayers = 64;

Status out_of_memory() { return {StatusCode::kTooLarge, "out of memory"}; }

Status check_config(const ModelConfig& c) {
  if (c.vocab_size < 2 || c.vocab_size > kMaxVocab) return bad("vocab_size must be in [2, 65536]");
  if (c.d_model == 0 || c.d_model > kMaxDModel) return bad("d_model must be in [1, 4096]");
  if (c.n_layers == 0 || c.n_layers > kMaxLayers) return bad("n_layers must be in [1, 64]");
  if (c.n_heads == 0 || c.n_heads > c.d_model) return bad("n_heads must be in [1, d_model]");
  if (c.d_model % c.n_heads != 0) return bad("d_model must be a multiple of n_heads");
  if (c.train_len < 2 || c.train_len > kMaxSeqLen) return bad("train_len must be in [2, 65536]");
  if (c.max_positions != 0 && (c.max_positions < c.train_len || c.max_positions > kMaxSeqLen))
    return bad("max_positions must be 0 or in [train_len, 65536]");
  if (static_cast<int>(c.scheme) < 0 || static_cast<int>(c.scheme) >= static_cast<int>(kNumSchemes))
    return bad(scheme_list());
  if (detail::rotates(c.scheme) && (c.d_model / c.n_heads) % 2 != 0)
    return bad("head_dim (d_model / n_heads) must be even for rope, xpos and p_rope");
  if (detail::mixes(c.scheme) && (c.d_model / c.n_heads) % 2 != 0)
    return bad("head_dim (d_model / n_heads) must be even for irope, nope_interval, gemma3 and swa_rope_nope");
  return Status::Ok();
}

std::size_t max_positions_of(const ModelConfig& c) { return c.max_positions != 0 ? c.max_positions : c.train_len; }

// Appends a tensor; its values are set by init().
std::size_t add(Model::Impl& m, std::string name, std::size_t rank, std::size_t rows, std::size_t cols, bool decay) {
  const auto offset = static_cast<std::size_t>(m.n_floats);
  m.n_floats += std::uint64_t{rows} * cols;
  m.tensors.push_back({std::move(name), rank, rows, cols, offset, decay});
  return m.tensors.size() - 1;
}

// The tensors of m.config, in order (no values).
void plan(Model::Impl& m) {
  const ModelConfig& c = m.config;
  const std::size_t d = c.d_model;
  m.tok_emb = add(m, "tok_emb", 2, c.vocab_size, d, false);
  if (c.scheme == Scheme::kLearned) m.pos_emb = add(m, "pos_emb", 2, m.max_positions, d, false);
  if (c.scheme == Scheme::kT5) m.t5_bias = add(m, "t5_bias", 2, detail::kT5Buckets, c.n_heads, false);
  if (detail::is_kerple(c.scheme)) {
    m.kerple_r1 = add(m, "kerple_r1", 1, 1, c.n_heads, false);
    m.kerple_r2 = add(m, "kerple_r2", 1, 1, c.n_heads, false);
  }
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    detail::Block b;
    b.ln1_w = add(m, p + "ln1.weight", 1, 1, d, false);
    b.ln1_b = add(m, p + "ln1.bias", 1, 1, d, false);
    b.wq = add(m, p + "wq", 2, d, d, true);
    b.wk = add(m, p + "wk", 2, d, d, true);
    b.wv = add(m, p + "wv", 2, d, d, true);
    b.wo = add(m, p + "wo", 2, d, d, true);
    b.ln2_w = add(m, p + "ln2.weight", 1, 1, d, false);
    b.ln2_b = add(m, p + "ln2.bias", 1, 1, d, false);
    b.w1 = add(m, p + "w1", 2, d, 4 * d, true);
    b.w2 = add(m, p + "w2", 2, 4 * d, d, true);
    if (c.scheme == Scheme::kFire) {
      b.fire_w1 = add(m, p + "fire.w1", 1, 1, detail::kFireWidth, false);
      b.fire_b1 = add(m, p + "fire.b1", 1, 1, detail::kFireWidth, false);
      b.fire_w2 = add(m, p + "fire.w2", 2, detail::kFireWidth, c.n_heads, false);
      b.fire_c = add(m, p + "fire.c", 1, 1, 1, false);
      b.fire_L = add(m, p + "fire.L", 1, 1, 1, false);
    }
    if (c.scheme == Scheme::kCope) b.cope_e = add(m, p + "cope.e", 2, c.train_len + 1, d, false);
    m.blocks.push_back(b);
  }
  m.ln_f_w = add(m, "ln_f.weight", 1, 1, d, false);
  m.ln_f_b = add(m, "ln_f.bias", 1, 1, d, false);
}

// The parameters, gradients and AdamW moments, once plan() has counted them and they fit in memory.
void allocate(Model::Impl& m) {
  const auto n = static_cast<std::size_t>(m.n_floats);
  m.params.assign(n, 0.0f);
  m.grads.assign(n, 0.0f);
  m.adam_m.assign(n, 0.0f);
  m.adam_v.assign(n, 0.0f);
}

// Seeded, tensor by tensor in order: matrices N(0, 0.02²), wo and w2 N(0, (0.02/√(2L))²), LayerNorm
// weights 1 and biases 0, pos_emb N(0, 0.02²), t5_bias 0, KERPLE's r1 = r2 = 1 (kerple_r1 =
// softplus⁻¹(1) = log(e − 1); kerple_r2 the same, or 0 for the power variant's 2 sigmoid); FIRE's
// hidden unit u = ReLU(x − u/32) (w1 1, b1 −u/32: knots spread over [0, 1)), w2 0 (a zero bias at
// the start), c = 0.1 and L = train_len / 2 (raw values softplus⁻¹ of them); CoPE's e 0.
// softplus⁻¹(v) = log(e^v − 1): the raw value detail::softplus maps to v (v itself above 20).
float softplus_inverse(double v) { return static_cast<float>(v > 20.0 ? v : std::log(std::expm1(v))); }

void init(Model::Impl& m) {
  detail::Rng rng(m.config.seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(m.config.n_layers));
  for (const detail::Tensor& t : m.tensors) {
    float* p = m.params.data() + t.offset;
    const std::size_t n = t.rows * t.cols;
    const auto ends = [&](const char* s) {
      const std::size_t k = std::strlen(s);
      return t.name.size() >= k && t.name.compare(t.name.size() - k, k, s) == 0;
    };
    if (ends(".fire.w1") || ends(".fire.b1") || ends(".fire.w2")) {
      for (std::size_t i = 0; i < n; ++i)
        p[i] = ends(".fire.w1") ? 1.0f : ends(".fire.b1") ? -static_cast<float>(i) / detail::kFireWidth : 0.0f;
    } else if (ends(".fire.c") || ends(".fire.L")) {
      p[0] = softplus_inverse(ends(".fire.c") ? 0.1 : static_cast<double>(m.config.train_len) / 2.0);
    } else if (t.name == "t5_bias" || ends(".cope.e")) {
      for (std::size_t i = 0; i < n; ++i) p[i] = 0.0f;
    } else if (t.name == "kerple_r1" || t.name == "kerple_r2") {
      const bool power_r2 = t.name == "kerple_r2" && m.config.scheme == Scheme::kKerplePower;
      for (std::size_t i = 0; i < n; ++i) p[i] = power_r2 ? 0.0f : softplus_inverse(1.0);
    } else if (t.rank == 1) {
      const float v = ends(".weight") ? 1.0f : 0.0f;
      for (std::size_t i = 0; i < n; ++i) p[i] = v;
    } else {
      const double sd = ends(".wo") || ends(".w2") ? residual_std : 0.02;
      for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(sd * rng.normal());
    }
  }
}

}  // namespace

const char* scheme_name(Scheme scheme) noexcept {
  const int i = static_cast<int>(scheme);
  return i >= 0 && i < static_cast<int>(kNumSchemes) ? kSchemeNames[i] : "unknown";
}

Status parse_scheme(const char* name, Scheme* out) noexcept {
  if (name == nullptr || out == nullptr) return bad("scheme must not be null");
  for (std::size_t i = 0; i < kNumSchemes; ++i)
    if (std::strcmp(name, kSchemeNames[i]) == 0) {
      *out = static_cast<Scheme>(i);
      return Status::Ok();
    }
  return bad(scheme_list());
}

// shape_check's, check_rows' and check_config's messages state these numbers.
static_assert(kMaxSeqLen == 65536 && kMaxTokens == std::size_t{1} << 24 && kMaxVocab == 65536,
              "update the messages that state them");

Status shape_check(std::size_t batch, std::size_t seq_len) noexcept {
  if (seq_len < 2 || seq_len > kMaxSeqLen) return bad("seq_len must be in [2, 65536]");
  return detail::check_rows(batch, seq_len);
}

Status footprint(const ModelConfig& config, std::size_t batch, std::size_t seq_len, Footprint* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  if (Status s = check_config(config); !s.ok()) return s;
  if (Status s = shape_check(batch, seq_len); !s.ok()) return s;
  try {
    Model::Impl m;
    m.config = config;
    m.max_positions = max_positions_of(config);
    plan(m);
    out->params = m.n_floats;
    out->activations = detail::activation_floats(config, batch, seq_len, std::max(seq_len, m.max_positions));
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  return Status::Ok();
}

Model::Model(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Model::~Model() = default;

Status Model::create(const ModelConfig& config, std::unique_ptr<Model>* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  if (Status s = check_config(config); !s.ok()) return s;
  try {
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->head_dim = config.d_model / config.n_heads;
    impl->max_positions = max_positions_of(config);
    plan(*impl);
    if (impl->n_floats > SIZE_MAX / (4 * sizeof(float)))
      return {StatusCode::kTooLarge, "the model's parameters do not fit in memory"};
    allocate(*impl);
    init(*impl);
    if (config.scheme == Scheme::kAlibi) {
      impl->slopes.resize(config.n_heads);
      if (Status s = alibi_slopes(impl->slopes.data(), config.n_heads); !s.ok()) return s;
    }
    out->reset(new Model(std::move(impl)));
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  return Status::Ok();
}

const ModelConfig& Model::config() const noexcept { return impl_->config; }
std::size_t Model::n_tensors() const noexcept { return impl_->tensors.size(); }
std::size_t Model::n_params() const noexcept { return impl_->params.size(); }
std::size_t Model::steps_taken() const noexcept { return impl_->steps; }

TensorView Model::tensor(std::size_t i) const noexcept {
  if (i >= impl_->tensors.size()) return {"", 0, 0, 0, nullptr, nullptr};
  const detail::Tensor& t = impl_->tensors[i];
  return {t.name.c_str(), t.rank, t.rows, t.cols, impl_->params.data() + t.offset, impl_->grads.data() + t.offset};
}

Status Model::find_tensor(const char* name, TensorView* out) const noexcept {
  if (name == nullptr || out == nullptr) return bad("name and out must not be null");
  for (std::size_t i = 0; i < impl_->tensors.size(); ++i)
    if (impl_->tensors[i].name == name) {
      *out = tensor(i);
      return Status::Ok();
    }
  return bad("no tensor of that name");
}

Status Model::position_parameters(std::vector<PositionArray>* out) const noexcept {
  if (out == nullptr) return bad("out must not be null");
  const Impl& m = *impl_;
  const ModelConfig& c = m.config;
  const std::size_t H = c.n_heads;
  try {
    out->clear();
    const auto copy = [&](const char* name, std::size_t t) {
      const detail::Tensor& x = m.tensors[t];
      const float* p = m.param(t);
      out->push_back({name, {x.rows, x.cols}, std::vector<float>(p, p + x.rows * x.cols)});
    };
    if (c.scheme == Scheme::kLearned) copy("pos_emb", m.pos_emb);
    if (c.scheme == Scheme::kT5) copy("t5_bias", m.t5_bias);
    if (detail::is_kerple(c.scheme)) {
      PositionArray r1{"r1", {H}, std::vector<float>(H)}, r2{"r2", {H}, std::vector<float>(H)};
      for (std::size_t h = 0; h < H; ++h) {
        const detail::KerpleHead k = detail::kerple_head(m, h);
        r1.values[h] = static_cast<float>(k.r1);
        r2.values[h] = static_cast<float>(k.r2);
      }
      out->push_back(std::move(r1));
      out->push_back(std::move(r2));
    }
    if (c.scheme == Scheme::kFire)
      for (std::size_t l = 0; l < c.n_layers; ++l) {
        const std::string p = "blocks." + std::to_string(l) + ".fire.";
        out->push_back({p + "c", {1}, {static_cast<float>(detail::fire_c(m, l))}});
        out->push_back({p + "L", {1}, {static_cast<float>(detail::fire_L(m, l))}});
        PositionArray f{p + "f", {kFirePoints, H}, std::vector<float>(kFirePoints * H)};
        detail::fire_function(m, l, kFirePoints, f.values.data());
        out->push_back(std::move(f));
      }
    if (c.scheme == Scheme::kCope)
      for (std::size_t l = 0; l < c.n_layers; ++l)
        copy(("blocks." + std::to_string(l) + ".cope.e").c_str(), m.blocks[l].cope_e);
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  return Status::Ok();
}

namespace detail {

Status check_rows(std::size_t batch, std::size_t seq_len) noexcept {
  if (batch == 0) return bad("batch must be > 0");
  if (batch > kMaxTokens / seq_len) return {StatusCode::kTooLarge, "batch * seq_len must be <= 2^24"};
  return Status::Ok();
}

// Layer l of a mixed-layer scheme (lab.hpp): global iff (l + 1) % k == 0, k = min(interval, n_layers),
// the intervals of HF's configs (Llama4TextConfig and SmolLM3Config no_rope_layer_interval 4, Gemma3
// sliding_window_pattern 6, Cohere2 sliding_window_pattern 4). Any other scheme: a plan of NoPE.
LayerPlan layer_plan(const ModelConfig& c, std::size_t l) {
  LayerPlan p;
  if (!mixes(c.scheme)) return p;
  const std::size_t interval = c.scheme == Scheme::kGemma3 ? 6 : 4;
  const bool global = (l + 1) % std::min(interval, c.n_layers) == 0;
  const std::size_t window = std::max<std::size_t>(2, c.train_len / 4);
  switch (c.scheme) {
    case Scheme::kIrope:
      if (global) p.floor_scale = static_cast<double>(std::max<std::size_t>(1, c.train_len / 32));
      else p.theta = kLocalTheta;
      break;
    case Scheme::kNopeInterval:
      if (!global) p.theta = kLocalTheta;
      break;
    case Scheme::kGemma3:
      p.theta = global ? kGemma3GlobalTheta : kLocalTheta;
      if (!global) p.window = window;
      break;
    default:  // kSwaRopeNope
      if (!global) {
        p.theta = kLocalTheta;
        p.window = window;
      }
  }
  return p;
}

Status check_tokens(const Model::Impl& m, const std::int32_t* tokens, std::size_t batch, std::size_t seq_len) noexcept {
  if (tokens == nullptr) return bad("tokens must not be null");
  if (Status s = shape_check(batch, seq_len); !s.ok()) return s;
  if (m.config.scheme == Scheme::kLearned && seq_len > m.max_positions)
    return {StatusCode::kBadShape,
            "seq_len must be <= max_positions for the learned scheme (positions beyond have no embedding)"};
  const auto v = static_cast<std::int64_t>(m.config.vocab_size);
  for (std::size_t i = 0; i < batch * seq_len; ++i)
    if (tokens[i] < 0 || tokens[i] >= v) return bad("tokens must be in [0, vocab_size)");
  return Status::Ok();
}

Status check_rope_choice(const Model::Impl& m, RopeScaling scaling, double factor) noexcept {
  if (std::find(std::begin(kRopeScalings), std::end(kRopeScalings), scaling) == std::end(kRopeScalings))
    return bad("rope_scaling must be none, linear, ntk, dynamic or yarn");
  if (scaling != RopeScaling::kNone && m.config.scheme != Scheme::kRope && m.config.scheme != Scheme::kXpos)
    return bad("rope_scaling needs the rope or xpos scheme");
  if (!(factor == 0.0 || (std::isfinite(factor) && factor >= 1.0)))
    return bad("rope_factor must be 0 or finite and >= 1");
  return Status::Ok();
}

Status check_positions(const Model::Impl& m, const std::int32_t* positions, std::size_t batch,
                       std::size_t seq_len) noexcept {
  if (positions == nullptr) return Status::Ok();
  const auto limit = static_cast<std::int64_t>(m.max_positions);
  for (std::size_t b = 0; b < batch; ++b) {
    const std::int32_t* p = positions + b * seq_len;
    if (p[0] < 0) return bad("positions must be >= 0");
    for (std::size_t t = 1; t < seq_len; ++t)
      if (p[t] <= p[t - 1]) return bad("positions must increase strictly along each row");
    if (p[seq_len - 1] >= limit) return bad("positions must be < max_positions (train_len if 0)");
  }
  return Status::Ok();
}

}  // namespace detail

Status Model::loss_and_gradients(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, float* loss,
                                 const StepOptions& options) noexcept {
  if (Status s = detail::check_tokens(*impl_, tokens, batch, seq_len); !s.ok()) return s;
  if (loss == nullptr) return bad("loss must not be null");
  if (Status s = detail::check_positions(*impl_, options.positions, batch, seq_len); !s.ok()) return s;
  if (Status s = detail::check_rope_choice(*impl_, options.rope_scaling, options.rope_factor); !s.ok()) return s;
  try {
    if (Status s =
            detail::prepare(*impl_, batch, seq_len, {options.rope_scaling, options.rope_factor}, options.positions);
        !s.ok())
      return s;
  } catch (const std::bad_alloc&) {
    impl_->ws = {};
    return out_of_memory();
  }
  detail::forward(*impl_, tokens);
  *loss = static_cast<float>(detail::mean_loss(*impl_));
  detail::backward(*impl_, tokens);
  return Status::Ok();
}

Status Model::evaluate(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, const EvalOptions& options,
                       double* loss, double* position_loss) noexcept {
  if (Status s = detail::check_tokens(*impl_, tokens, batch, seq_len); !s.ok()) return s;
  if (loss == nullptr) return bad("loss must not be null");
  if (Status s = detail::check_rope_choice(*impl_, options.rope_scaling, options.rope_factor); !s.ok()) return s;
  try {
    std::vector<double> per_pos(seq_len - 1, 0.0);
    if (Status s = detail::prepare(*impl_, 1, seq_len, {options.rope_scaling, options.rope_factor}); !s.ok()) return s;
    double total = 0.0;
    for (std::size_t b = 0; b < batch; ++b) {
      detail::forward(*impl_, tokens + b * seq_len);
      for (std::size_t t = 0; t + 1 < seq_len; ++t) {
        per_pos[t] += impl_->ws.token_loss[t];
        total += impl_->ws.token_loss[t];
      }
    }
    *loss = total / static_cast<double>(batch * (seq_len - 1));
    if (position_loss != nullptr)
      for (std::size_t t = 0; t + 1 < seq_len; ++t) position_loss[t] = per_pos[t] / static_cast<double>(batch);
  } catch (const std::bad_alloc&) {
    impl_->ws = {};
    return out_of_memory();
  }
  return Status::Ok();
}

}  // namespace posenc::lab
