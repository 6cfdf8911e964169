// RoPE inverse frequencies and attention factors, scaling type by scaling type, to the formulas of
// Hugging Face transformers' modeling_rope_utils.py (_compute_*_parameters), and the ggml
// parameters (llama.cpp) that give the same rotation. Scalar float64: this is setup work, rot_dim/2
// values per call; the bulk work is in kernels/rope.cpp.
//
// As HF's ROPE_INIT_FUNCTIONS: one function per scaling type, registered in one table (kScalings,
// indexed by RopeScaling) with its name and its ggml form. rope_frequencies runs the checks every
// type shares, then the type's function; ggml_rope_params runs rope_frequencies (every check, and
// the gain), then the type's ggml form, which reuses the formulas below (ntk_base, dynamic_base,
// yarn_factor, llama3_band, longrope_factors, correction_dims) instead of repeating them.
#include <cmath>
#include <new>
#include <vector>

#include "posenc/rope.hpp"
#include "rope_rules.hpp"
#include "refusals.hpp"

namespace posenc {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }

// 1 / base^(2i / dim): pair i's frequency, unscaled.
double default_freq(double base, std::size_t i, double dim) {
  return 1.0 / std::pow(base, static_cast<double>(2 * i) / dim);
}

// inv_freq[i] = default_freq(base, i, dim), i < n.
void default_inv_freq(double base, std::size_t dim, double* inv_freq, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) inv_freq[i] = default_freq(base, i, static_cast<double>(dim));
}

// What one call's scaling function reads: the parameters, the length and the rotated dims.
struct Call {
  const RopeParams& p;
  std::size_t seq_len;
  std::size_t rot, half;  // rope_rot_dim(p), rot / 2
  double dim;             // rot as a double
};

// ---- the formulas the frequencies and the ggml forms share ----------------------------------------

// Static NTK-aware base: theta · factor^(dim / (dim − 2)).
double ntk_base(const Call& c) { return c.p.theta * std::pow(*c.p.factor, c.dim / (c.dim - 2.0)); }

// Dynamic NTK's base at seq_len: the NTK base for factor · len / max_pos − (factor − 1), len at
// least max_position_embeddings.
double dynamic_base(const Call& c) {
  const double max_pos = static_cast<double>(c.p.max_position_embeddings);
  const double len = std::fmax(static_cast<double>(c.seq_len), max_pos);
  const double f = *c.p.factor;
  return c.p.theta * std::pow(f * len / max_pos - (f - 1.0), c.dim / (c.dim - 2.0));
}

// YaRN's factor: params.factor, else max / original max position embeddings.
double yarn_factor(const RopeParams& p) {
  return p.factor
             ? *p.factor
             : static_cast<double>(p.max_position_embeddings) / static_cast<double>(p.original_max_position_embeddings);
}

// HF's find_correction_range before its clamp, in T (double as HF, float as ggml_rope_yarn_corr_dims):
// the pair index whose wavelength fits num_rotations times into the original context, for beta_fast
// (*lo) and beta_slow (*hi); floored / ceiled when truncate. Each caller clamps as its model does.
template <class T>
void correction_dims(T beta_fast, T beta_slow, T dim, T theta, T original, bool truncate, T* lo, T* hi) {
  const auto correction_dim = [&](T num_rotations) {
    return dim * std::log(original / (num_rotations * T(2) * static_cast<T>(kPi))) / (T(2) * std::log(theta));
  };
  *lo = correction_dim(beta_fast);
  *hi = correction_dim(beta_slow);
  if (truncate) {
    *lo = std::floor(*lo);
    *hi = std::ceil(*hi);
  }
}

// Llama 3.1's wavelength bands: a pair of wavelength wavelen keeps its frequency (high
// frequencies, or an empty middle band), is divided by factor (low frequencies), or in between
// mixes the two with weight *smooth on the kept one.
enum class Band { kKept, kDivided, kSmooth };
Band llama3_band(const RopeParams& p, double wavelen, double* smooth) {
  const double old_len = static_cast<double>(p.original_max_position_embeddings);
  if (wavelen < old_len / p.high_freq_factor) return Band::kKept;
  if (wavelen > old_len / p.low_freq_factor) return Band::kDivided;
  // Llama 4 Scout sets both factors to 1: no smoothed band (HF's torch.where never selects it).
  if (p.high_freq_factor == p.low_freq_factor) return Band::kKept;
  *smooth = (old_len / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
  return Band::kSmooth;
}

// LongRoPE's original context: original_max_position_embeddings, else max_position_embeddings.
std::size_t longrope_original(const RopeParams& p) {
  return p.original_max_position_embeddings != 0 ? p.original_max_position_embeddings : p.max_position_embeddings;
}

// The factors LongRoPE uses at seq_len: long iff the length (context_length when set, llama.cpp's
// switch; else seq_len, HF's) exceeds the original context.
const std::vector<double>& longrope_factors(const RopeParams& p, std::size_t seq_len) {
  const std::size_t len = p.context_length != 0 ? p.context_length : seq_len;
  return len > longrope_original(p) ? p.long_factor : p.short_factor;
}

// ---- one function per scaling type: inv_freq[half] and the attention factor -----------------------

Status none_frequencies(const Call& c, double* inv_freq, double*) {
  default_inv_freq(c.p.theta, c.rot, inv_freq, c.half);
  return Status::Ok();
}

Status linear_frequencies(const Call& c, double* inv_freq, double*) {
  if (!c.p.factor) return bad("factor is required for linear scaling");
  default_inv_freq(c.p.theta, c.rot, inv_freq, c.half);
  for (std::size_t i = 0; i < c.half; ++i) inv_freq[i] /= *c.p.factor;
  return Status::Ok();
}

Status ntk_frequencies(const Call& c, double* inv_freq, double*) {
  if (!c.p.factor) return bad("factor is required for ntk scaling");
  if (c.rot <= 2) return bad("rot_dim must be > 2 for ntk scaling");
  default_inv_freq(ntk_base(c), c.rot, inv_freq, c.half);
  return Status::Ok();
}

Status dynamic_frequencies(const Call& c, double* inv_freq, double*) {
  if (!c.p.factor) return bad("factor is required for dynamic scaling");
  if (c.rot <= 2) return bad("rot_dim must be > 2 for dynamic scaling");
  if (c.p.max_position_embeddings == 0) return bad("max_position_embeddings is required for dynamic scaling");
  default_inv_freq(dynamic_base(c), c.rot, inv_freq, c.half);
  return Status::Ok();
}

Status yarn_frequencies(const Call& c, double* inv_freq, double* af) {
  const RopeParams& p = c.p;
  if (p.original_max_position_embeddings == 0)
    return bad("original_max_position_embeddings is required for yarn scaling");
  if (p.theta == 1.0) return bad("theta must be != 1 for yarn scaling");
  if (!finite_positive(p.beta_fast)) return bad("beta_fast must be finite and > 0");
  if (!finite_positive(p.beta_slow)) return bad("beta_slow must be finite and > 0");
  if (!std::isfinite(p.mscale) || !std::isfinite(p.mscale_all_dim))
    return bad("mscale and mscale_all_dim must be finite");
  if (!p.factor && p.max_position_embeddings == 0)
    return bad("factor (or max_position_embeddings) is required for yarn scaling");
  const double f = yarn_factor(p);
  if (f < 1.0) return bad("factor must be finite and >= 1");
  *af = yarn_attention_factor(f, p.mscale, p.mscale_all_dim);
  double low, high;
  yarn_correction_range(p.beta_fast, p.beta_slow, c.rot, p.theta,
                        static_cast<double>(p.original_max_position_embeddings), p.truncate, &low, &high);
  if (low == high) high += 0.001;  // HF: prevent the singularity
  for (std::size_t i = 0; i < c.half; ++i) {
    const double extrapolation = default_freq(p.theta, i, c.dim);
    const double interpolation = extrapolation / f;
    const double ramp = std::fmin(std::fmax((static_cast<double>(i) - low) / (high - low), 0.0), 1.0);
    // ramp 0: keep the original frequency (fast pairs); ramp 1: interpolate (slow pairs).
    inv_freq[i] = interpolation * ramp + extrapolation * (1.0 - ramp);
  }
  return Status::Ok();
}

Status llama3_frequencies(const Call& c, double* inv_freq, double*) {
  const RopeParams& p = c.p;
  if (!p.factor) return bad("factor is required for llama3 scaling");
  if (p.original_max_position_embeddings == 0)
    return bad("original_max_position_embeddings is required for llama3 scaling");
  if (!finite_positive(p.low_freq_factor)) return bad("low_freq_factor must be finite and > 0");
  if (!(std::isfinite(p.high_freq_factor) && p.high_freq_factor >= p.low_freq_factor))
    return bad("high_freq_factor must be finite and >= low_freq_factor");
  default_inv_freq(p.theta, c.rot, inv_freq, c.half);
  for (std::size_t i = 0; i < c.half; ++i) {
    double smooth = 0.0;
    switch (llama3_band(p, 2.0 * kPi / inv_freq[i], &smooth)) {
      case Band::kKept: break;
      case Band::kDivided: inv_freq[i] /= *p.factor; break;
      case Band::kSmooth: inv_freq[i] = (1.0 - smooth) * inv_freq[i] / *p.factor + smooth * inv_freq[i]; break;
    }
  }
  return Status::Ok();
}

Status longrope_frequencies(const Call& c, double* inv_freq, double* af) {
  const RopeParams& p = c.p;
  const std::size_t orig_len = longrope_original(p);
  if (orig_len == 0) return bad("original_max_position_embeddings is required for longrope scaling");
  if (p.short_factor.size() != c.half || p.long_factor.size() != c.half)
    return {StatusCode::kBadShape, "short_factor and long_factor must have rot_dim / 2 entries"};
  for (std::size_t i = 0; i < c.half; ++i)
    if (!finite_positive(p.short_factor[i]) || !finite_positive(p.long_factor[i]))
      return bad("short_factor and long_factor entries must be finite and > 0");
  const double orig = static_cast<double>(orig_len);
  double f = 1.0;
  if (p.factor) f = *p.factor;
  else if (p.max_position_embeddings != 0) f = static_cast<double>(p.max_position_embeddings) / orig;
  *af = f <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(f) / std::log(orig));
  const std::vector<double>& ext = longrope_factors(p, c.seq_len);
  for (std::size_t i = 0; i < c.half; ++i)
    inv_freq[i] = 1.0 / (ext[i] * std::pow(p.theta, static_cast<double>(2 * i) / c.dim));
  return Status::Ok();
}

Status proportional_frequencies(const Call& c, double* inv_freq, double*) {
  const RopeParams& p = c.p;
  if (!(p.partial_rotary_factor > 0.0 && p.partial_rotary_factor <= 1.0))
    return bad("partial_rotary_factor must be in (0, 1]");
  // HF: rope_angles = int(partial_rotary_factor * head_dim // 2); exponents over head_dim.
  const auto rope_angles =
      static_cast<std::size_t>(std::floor(p.partial_rotary_factor * static_cast<double>(p.head_dim) / 2.0));
  const double f = p.factor ? *p.factor : 1.0;
  for (std::size_t i = 0; i < c.half; ++i)
    inv_freq[i] = i < rope_angles ? default_freq(p.theta, i, static_cast<double>(p.head_dim)) / f : 0.0;
  return Status::Ok();
}

// ---- one ggml form per scaling type (after rope_frequencies has checked the parameters) ------------

// What a ggml form sets: g's freq_scale, ext_factor and correction dims, the base, the per-pair
// divisors ff (all 1 to start with) and the gain (rope_frequencies' attention factor to start with).
struct GgmlForm {
  GgmlRope g;
  double base;
  std::vector<double> ff;
  double gain;
};

void none_ggml(const Call&, GgmlForm*) {}

void linear_ggml(const Call& c, GgmlForm* out) { out->g.freq_scale = static_cast<float>(1.0 / *c.p.factor); }

void ntk_ggml(const Call& c, GgmlForm* out) { out->base = ntk_base(c); }

void dynamic_ggml(const Call& c, GgmlForm* out) { out->base = dynamic_base(c); }

void yarn_ggml(const Call& c, GgmlForm* out) {
  const RopeParams& p = c.p;
  const double f = yarn_factor(p);
  out->g.freq_scale = static_cast<float>(1.0 / f);
  out->g.ext_factor = 1.0f;
  float lo, hi;
  correction_dims(static_cast<float>(p.beta_fast), static_cast<float>(p.beta_slow), static_cast<float>(c.rot),
                  static_cast<float>(p.theta),
                  static_cast<float>(static_cast<double>(p.original_max_position_embeddings)), p.truncate, &lo, &hi);
  out->g.corr_low = std::fmax(0.0f, lo);
  out->g.corr_high = std::fmin(static_cast<float>(c.rot) - 1.0f, hi);
  out->gain /= 1.0 + 0.1 * std::log(f);  // ggml multiplies its own YaRN gain back in
}

// llama.cpp's converter: rope_freqs = 1, factor, or 1 / ((1 - smooth) / factor + smooth), from the
// float32 frequencies.
void llama3_ggml(const Call& c, GgmlForm* out) {
  for (std::size_t i = 0; i < c.half; ++i) {
    const double freq = static_cast<float>(default_freq(c.p.theta, i, c.dim));
    double smooth = 0.0;
    switch (llama3_band(c.p, 2.0 * kPi / freq, &smooth)) {
      case Band::kKept: break;
      case Band::kDivided: out->ff[i] = *c.p.factor; break;
      case Band::kSmooth: out->ff[i] = 1.0 / ((1.0 - smooth) / *c.p.factor + smooth); break;
    }
  }
}

void longrope_ggml(const Call& c, GgmlForm* out) { out->ff = longrope_factors(c.p, c.seq_len); }

// ---- the table ------------------------------------------------------------------------------------

using FrequenciesFn = Status (*)(const Call&, double* inv_freq, double* attention_factor);
using GgmlFn = void (*)(const Call&, GgmlForm*);

struct Scaling {
  RopeScaling id;
  const char* name;           // rope_scaling_name
  FrequenciesFn frequencies;  // rope_frequencies
  GgmlFn ggml;                // ggml_rope_params; null: no ggml form, and no_ggml says so
  const char* no_ggml;
};

constexpr Scaling kScalings[] = {
    {RopeScaling::kNone, "none", none_frequencies, none_ggml, nullptr},
    {RopeScaling::kLinear, "linear", linear_frequencies, linear_ggml, nullptr},
    {RopeScaling::kNtk, "ntk", ntk_frequencies, ntk_ggml, nullptr},
    {RopeScaling::kDynamic, "dynamic", dynamic_frequencies, dynamic_ggml, nullptr},
    {RopeScaling::kYarn, "yarn", yarn_frequencies, yarn_ggml, nullptr},
    {RopeScaling::kLlama3, "llama3", llama3_frequencies, llama3_ggml, nullptr},
    {RopeScaling::kLongRope, "longrope", longrope_frequencies, longrope_ggml, nullptr},
    {RopeScaling::kProportional, "proportional", proportional_frequencies, nullptr,
     "precision ggml has no form of proportional scaling"},
};
static_assert(sizeof(kScalings) / sizeof(kScalings[0]) == kNumRopeScalings, "one entry per RopeScaling");

constexpr bool entries_in_enum_order() {
  for (int k = 0; k < kNumRopeScalings; ++k)
    if (static_cast<int>(kScalings[k].id) != k) return false;
  return true;
}
static_assert(entries_in_enum_order(), "kScalings[k] is RopeScaling k");

const Scaling* find_scaling(RopeScaling scaling) {
  const int k = static_cast<int>(scaling);
  return k >= 0 && k < kNumRopeScalings ? &kScalings[k] : nullptr;
}

}  // namespace

const char* rope_scaling_name(RopeScaling scaling) noexcept {
  const Scaling* s = find_scaling(scaling);
  return s != nullptr ? s->name : "unknown";
}

const char* rope_layout_name(RopeLayout layout) noexcept {
  return layout == RopeLayout::kInterleaved ? "interleaved"
         : layout == RopeLayout::kHalfSplit ? "half_split"
                                            : "unknown";
}

const char* precision_name(Precision precision) noexcept {
  switch (precision) {
    case Precision::kFast: return "fast";
    case Precision::kAccurate: return "accurate";
    case Precision::kGgml: return "ggml";
  }
  return "unknown";
}

std::size_t rope_rot_dim(const RopeParams& p) noexcept {
  if (p.head_dim == 0) return 0;
  if (p.scaling == RopeScaling::kProportional) return p.head_dim;
  if (p.rot_dim != 0) return p.rot_dim;
  if (!(p.partial_rotary_factor > 0.0 && p.partial_rotary_factor <= 1.0)) return 0;
  // HF: dim = int(head_dim * partial_rotary_factor), truncating.
  return static_cast<std::size_t>(static_cast<double>(p.head_dim) * p.partial_rotary_factor);
}

double yarn_get_mscale(double scale, double mscale) noexcept {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

double yarn_attention_factor(double factor, double mscale, double mscale_all_dim) noexcept {
  if (mscale != 0.0 && mscale_all_dim != 0.0)
    return yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim);
  return yarn_get_mscale(factor);
}

void yarn_correction_range(double beta_fast, double beta_slow, std::size_t rot_dim, double theta,
                           double original_max_position_embeddings, bool truncate, double* low, double* high) noexcept {
  const double dim = static_cast<double>(rot_dim);
  double lo, hi;
  correction_dims(beta_fast, beta_slow, dim, theta, original_max_position_embeddings, truncate, &lo, &hi);
  *low = std::fmax(lo, 0.0);
  *high = std::fmin(hi, dim - 1.0);
}

Status rope_frequencies(const RopeParams& p, std::size_t seq_len, double* inv_freq, std::size_t n_freq,
                        double* attention_factor) noexcept {
  if (p.head_dim == 0) return bad("head_dim must be > 0");
  if (p.rot_dim == 0 && !(p.partial_rotary_factor > 0.0 && p.partial_rotary_factor <= 1.0))
    return bad("partial_rotary_factor must be in (0, 1]");
  const std::size_t rot = rope_rot_dim(p);
  if (p.scaling == RopeScaling::kProportional && p.head_dim % 2 != 0)
    return bad("head_dim must be even for proportional scaling");
  if (Status s = check_rot_dim(rot); !s.ok()) return s;
  if (Status s = check_rot_placement(p.head_dim, rot, p.rot_offset); !s.ok()) return s;
  if (!finite_positive(p.theta)) return bad("theta must be finite and > 0");
  if (inv_freq == nullptr || attention_factor == nullptr) return bad("outputs must not be null");
  if (n_freq != rot / 2) return {StatusCode::kBadShape, "inv_freq must have rot_dim / 2 entries"};
  if (p.factor && !(std::isfinite(*p.factor) && *p.factor >= 1.0)) return bad("factor must be finite and >= 1");
  if (p.attention_factor && !finite_positive(*p.attention_factor))
    return bad("attention_factor must be finite and > 0");

  const std::size_t half = rot / 2;
  const Scaling* scaling = find_scaling(p.scaling);
  if (scaling == nullptr) return bad("scaling is not a known RopeScaling");
  double af = 1.0;
  if (Status s = scaling->frequencies({p, seq_len, rot, half, static_cast<double>(rot)}, inv_freq, &af); !s.ok())
    return s;
  if (p.attention_factor) af = *p.attention_factor;  // an explicit gain wins for every scheme
  if (!p.mrope_section.empty()) {
    const std::size_t sum =
        p.mrope_section.size() == 3 ? p.mrope_section[0] + p.mrope_section[1] + p.mrope_section[2] : 0;
    if (p.mrope_section.size() != 3 || (p.mrope_rest_unrotated ? sum > half : sum != half))
      return bad(p.mrope_rest_unrotated ? "mrope_section must have 3 entries summing to at most rot_dim / 2"
                                        : "mrope_section must have 3 entries summing to rot_dim / 2");
  }
  if (!p.freq_factors.empty()) {
    if (p.freq_factors.size() != half) return {StatusCode::kBadShape, "freq_factors must have rot_dim / 2 entries"};
    for (std::size_t i = 0; i < half; ++i) {
      if (!finite_positive(p.freq_factors[i])) return bad("freq_factors entries must be finite and > 0");
      inv_freq[i] /= p.freq_factors[i];  // llama.cpp: theta / freq_factor, after the scaling
    }
  }
  *attention_factor = af;
  return Status::Ok();
}

Status ggml_rope_params(const RopeParams& p, std::size_t seq_len, GgmlRope* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  const Scaling* scaling = find_scaling(p.scaling);
  if (scaling != nullptr && scaling->ggml == nullptr) return bad(scaling->no_ggml);
  const std::size_t rot = rope_rot_dim(p);
  try {
    // Every check of the scheme (and its gain) first, through the float64 route.
    GgmlForm form{GgmlRope{}, p.theta, {}, 1.0};
    std::vector<double> inv(rot / 2 + 1);
    if (Status s = rope_frequencies(p, seq_len, inv.data(), rot / 2, &form.gain); !s.ok()) return s;
    const std::size_t half = rot / 2;
    form.g.n_dims = rot;
    form.ff.assign(half, 1.0);
    scaling->ggml({p, seq_len, rot, half, static_cast<double>(rot)}, &form);
    if (!p.freq_factors.empty())
      for (std::size_t i = 0; i < half; ++i) form.ff[i] *= p.freq_factors[i];
    bool any = false;
    for (double v : form.ff) any = any || v != 1.0;
    if (any) form.g.freq_factors.assign(form.ff.begin(), form.ff.end());
    form.g.freq_base = static_cast<float>(form.base);
    form.g.attn_factor = static_cast<float>(form.gain);
    *out = std::move(form.g);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rot_dim too large for memory"};
  }
}

}  // namespace posenc
