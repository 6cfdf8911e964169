// RoPE inverse frequencies and attention factors, scheme by scheme, to the formulas of Hugging Face
// transformers' modeling_rope_utils.py (_compute_*_parameters). Scalar float64: this is setup work,
// rot_dim/2 values per call; the bulk work is in kernels/rope.cpp.
#include <cmath>
#include <new>
#include <vector>

#include "posenc/rope.hpp"

namespace posenc {
namespace {

constexpr double kPi = 3.14159265358979323846;

Status bad(const char* message) { return {StatusCode::kBadArgument, message}; }

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }

// inv_freq[i] = 1 / base^(2i / dim), i < n.
void default_inv_freq(double base, std::size_t dim, double* inv_freq, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    inv_freq[i] = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(dim));
}

}  // namespace

const char* rope_scaling_name(RopeScaling scaling) noexcept {
  switch (scaling) {
    case RopeScaling::kNone: return "none";
    case RopeScaling::kLinear: return "linear";
    case RopeScaling::kNtk: return "ntk";
    case RopeScaling::kDynamic: return "dynamic";
    case RopeScaling::kYarn: return "yarn";
    case RopeScaling::kLlama3: return "llama3";
    case RopeScaling::kLongRope: return "longrope";
    case RopeScaling::kProportional: return "proportional";
  }
  return "unknown";
}

const char* rope_layout_name(RopeLayout layout) noexcept {
  return layout == RopeLayout::kInterleaved ? "interleaved" : layout == RopeLayout::kHalfSplit ? "half_split" : "unknown";
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
  if (mscale != 0.0 && mscale_all_dim != 0.0) return yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim);
  return yarn_get_mscale(factor);
}

void yarn_correction_range(double beta_fast, double beta_slow, std::size_t rot_dim, double theta,
                           double original_max_position_embeddings, bool truncate, double* low,
                           double* high) noexcept {
  const double dim = static_cast<double>(rot_dim);
  // The pair index whose wavelength fits num_rotations times into the original context.
  auto correction_dim = [&](double num_rotations) {
    return dim * std::log(original_max_position_embeddings / (num_rotations * 2.0 * kPi)) /
           (2.0 * std::log(theta));
  };
  double lo = correction_dim(beta_fast);
  double hi = correction_dim(beta_slow);
  if (truncate) {
    lo = std::floor(lo);
    hi = std::ceil(hi);
  }
  *low = std::fmax(lo, 0.0);
  *high = std::fmin(hi, dim - 1.0);
}

Status rope_frequencies(const RopeParams& p, std::size_t seq_len, double* inv_freq,
                        std::size_t n_freq, double* attention_factor) noexcept {
  if (p.head_dim == 0) return bad("head_dim must be > 0");
  if (p.rot_dim == 0 && !(p.partial_rotary_factor > 0.0 && p.partial_rotary_factor <= 1.0))
    return bad("partial_rotary_factor must be in (0, 1]");
  const std::size_t rot = rope_rot_dim(p);
  if (p.scaling == RopeScaling::kProportional && p.head_dim % 2 != 0)
    return bad("head_dim must be even for proportional scaling");
  if (rot == 0) return bad("rot_dim must be > 0");
  if (rot % 2 != 0) return bad("rot_dim must be even");
  if (rot > p.head_dim) return bad("rot_dim must be <= head_dim");
  if (p.rot_offset > p.head_dim - rot) return bad("rot_offset + rot_dim must be <= head_dim");
  if (!finite_positive(p.theta)) return bad("theta must be finite and > 0");
  if (inv_freq == nullptr || attention_factor == nullptr) return bad("outputs must not be null");
  if (n_freq != rot / 2) return {StatusCode::kBadShape, "inv_freq must have rot_dim / 2 entries"};
  if (p.factor && !(std::isfinite(*p.factor) && *p.factor >= 1.0))
    return bad("factor must be finite and >= 1");
  if (p.attention_factor && !finite_positive(*p.attention_factor))
    return bad("attention_factor must be finite and > 0");

  const std::size_t half = rot / 2;
  const double dim = static_cast<double>(rot);
  double af = 1.0;

  switch (p.scaling) {
    case RopeScaling::kNone:
      default_inv_freq(p.theta, rot, inv_freq, half);
      break;

    case RopeScaling::kLinear:
      if (!p.factor) return bad("factor is required for linear scaling");
      default_inv_freq(p.theta, rot, inv_freq, half);
      for (std::size_t i = 0; i < half; ++i) inv_freq[i] /= *p.factor;
      break;

    case RopeScaling::kNtk:
      if (!p.factor) return bad("factor is required for ntk scaling");
      if (rot <= 2) return bad("rot_dim must be > 2 for ntk scaling");
      default_inv_freq(p.theta * std::pow(*p.factor, dim / (dim - 2.0)), rot, inv_freq, half);
      break;

    case RopeScaling::kDynamic: {
      if (!p.factor) return bad("factor is required for dynamic scaling");
      if (rot <= 2) return bad("rot_dim must be > 2 for dynamic scaling");
      if (p.max_position_embeddings == 0)
        return bad("max_position_embeddings is required for dynamic scaling");
      const double max_pos = static_cast<double>(p.max_position_embeddings);
      const double len = std::fmax(static_cast<double>(seq_len), max_pos);
      const double f = *p.factor;
      const double base = p.theta * std::pow(f * len / max_pos - (f - 1.0), dim / (dim - 2.0));
      default_inv_freq(base, rot, inv_freq, half);
      break;
    }

    case RopeScaling::kYarn: {
      if (p.original_max_position_embeddings == 0)
        return bad("original_max_position_embeddings is required for yarn scaling");
      if (p.theta == 1.0) return bad("theta must be != 1 for yarn scaling");
      if (!finite_positive(p.beta_fast)) return bad("beta_fast must be finite and > 0");
      if (!finite_positive(p.beta_slow)) return bad("beta_slow must be finite and > 0");
      if (!std::isfinite(p.mscale) || !std::isfinite(p.mscale_all_dim))
        return bad("mscale and mscale_all_dim must be finite");
      const double orig = static_cast<double>(p.original_max_position_embeddings);
      double f;
      if (p.factor) {
        f = *p.factor;
      } else {
        if (p.max_position_embeddings == 0)
          return bad("factor (or max_position_embeddings) is required for yarn scaling");
        f = static_cast<double>(p.max_position_embeddings) / orig;
        if (f < 1.0) return bad("factor must be finite and >= 1");
      }
      af = yarn_attention_factor(f, p.mscale, p.mscale_all_dim);
      double low, high;
      yarn_correction_range(p.beta_fast, p.beta_slow, rot, p.theta, orig, p.truncate, &low, &high);
      if (low == high) high += 0.001;  // HF: prevent the singularity
      for (std::size_t i = 0; i < half; ++i) {
        const double extrapolation = 1.0 / std::pow(p.theta, static_cast<double>(2 * i) / dim);
        const double interpolation = extrapolation / f;
        const double ramp = std::fmin(std::fmax((static_cast<double>(i) - low) / (high - low), 0.0), 1.0);
        // ramp 0: keep the original frequency (fast pairs); ramp 1: interpolate (slow pairs).
        inv_freq[i] = interpolation * ramp + extrapolation * (1.0 - ramp);
      }
      break;
    }

    case RopeScaling::kLlama3: {
      if (!p.factor) return bad("factor is required for llama3 scaling");
      if (p.original_max_position_embeddings == 0)
        return bad("original_max_position_embeddings is required for llama3 scaling");
      if (!finite_positive(p.low_freq_factor)) return bad("low_freq_factor must be finite and > 0");
      // Llama 4 Scout sets both to 1: no smoothed band (HF's torch.where never selects it).
      if (!(std::isfinite(p.high_freq_factor) && p.high_freq_factor >= p.low_freq_factor))
        return bad("high_freq_factor must be finite and >= low_freq_factor");
      const double old_len = static_cast<double>(p.original_max_position_embeddings);
      const double low_freq_wavelen = old_len / p.low_freq_factor;
      const double high_freq_wavelen = old_len / p.high_freq_factor;
      default_inv_freq(p.theta, rot, inv_freq, half);
      for (std::size_t i = 0; i < half; ++i) {
        const double wavelen = 2.0 * kPi / inv_freq[i];
        if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
        if (wavelen > low_freq_wavelen) {           // low frequencies: interpolated
          inv_freq[i] /= *p.factor;
          continue;
        }
        if (p.high_freq_factor == p.low_freq_factor) continue;  // the band is empty
        const double smooth =
            (old_len / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
        inv_freq[i] = (1.0 - smooth) * inv_freq[i] / *p.factor + smooth * inv_freq[i];
      }
      break;
    }

    case RopeScaling::kLongRope: {
      const std::size_t orig_len = p.original_max_position_embeddings != 0
                                       ? p.original_max_position_embeddings
                                       : p.max_position_embeddings;
      if (orig_len == 0)
        return bad("original_max_position_embeddings is required for longrope scaling");
      if (p.short_factor.size() != half || p.long_factor.size() != half)
        return {StatusCode::kBadShape, "short_factor and long_factor must have rot_dim / 2 entries"};
      for (std::size_t i = 0; i < half; ++i)
        if (!finite_positive(p.short_factor[i]) || !finite_positive(p.long_factor[i]))
          return bad("short_factor and long_factor entries must be finite and > 0");
      const double orig = static_cast<double>(orig_len);
      double f = 1.0;
      if (p.factor)
        f = *p.factor;
      else if (p.max_position_embeddings != 0)
        f = static_cast<double>(p.max_position_embeddings) / orig;
      af = f <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(f) / std::log(orig));
      const std::size_t len = p.context_length != 0 ? p.context_length : seq_len;
      const std::vector<double>& ext = len > orig_len ? p.long_factor : p.short_factor;
      for (std::size_t i = 0; i < half; ++i)
        inv_freq[i] = 1.0 / (ext[i] * std::pow(p.theta, static_cast<double>(2 * i) / dim));
      break;
    }

    case RopeScaling::kProportional: {
      if (!(p.partial_rotary_factor > 0.0 && p.partial_rotary_factor <= 1.0))
        return bad("partial_rotary_factor must be in (0, 1]");
      // HF: rope_angles = int(partial_rotary_factor * head_dim // 2); exponents over head_dim.
      const auto rope_angles = static_cast<std::size_t>(
          std::floor(p.partial_rotary_factor * static_cast<double>(p.head_dim) / 2.0));
      const double f = p.factor ? *p.factor : 1.0;
      for (std::size_t i = 0; i < half; ++i)
        inv_freq[i] = i < rope_angles
                          ? 1.0 / std::pow(p.theta, static_cast<double>(2 * i) /
                                                        static_cast<double>(p.head_dim)) / f
                          : 0.0;
      break;
    }

    default:
      return bad("scaling is not a known RopeScaling");
  }
  if (p.attention_factor) af = *p.attention_factor;  // an explicit gain wins for every scheme
  if (!p.mrope_section.empty()) {
    const std::size_t sum = p.mrope_section.size() == 3 ? p.mrope_section[0] + p.mrope_section[1] + p.mrope_section[2] : 0;
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

}  // namespace posenc

namespace posenc {

Status ggml_rope_params(const RopeParams& p, std::size_t seq_len, GgmlRope* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  if (p.scaling == RopeScaling::kProportional) return bad("precision ggml has no form of proportional scaling");
  const std::size_t rot = rope_rot_dim(p);
  double gain = 1.0;
  try {
    // Every check of the scheme (and its gain) first, through the float64 route.
    std::vector<double> inv(rot / 2 + 1);
    if (Status s = rope_frequencies(p, seq_len, inv.data(), rot / 2, &gain); !s.ok()) return s;
    GgmlRope g;
    g.n_dims = rot;
    const std::size_t half = rot / 2;
    const double dim = static_cast<double>(rot);
    double base = p.theta;
    std::vector<double> ff(half, 1.0);
    switch (p.scaling) {
      case RopeScaling::kLinear: g.freq_scale = static_cast<float>(1.0 / *p.factor); break;
      case RopeScaling::kNtk: base = p.theta * std::pow(*p.factor, dim / (dim - 2.0)); break;
      case RopeScaling::kDynamic: {
        const double max_pos = static_cast<double>(p.max_position_embeddings);
        const double len = std::fmax(static_cast<double>(seq_len), max_pos);
        base = p.theta * std::pow(*p.factor * len / max_pos - (*p.factor - 1.0), dim / (dim - 2.0));
        break;
      }
      case RopeScaling::kYarn: {
        const double orig = static_cast<double>(p.original_max_position_embeddings);
        const double f = p.factor ? *p.factor : static_cast<double>(p.max_position_embeddings) / orig;
        g.freq_scale = static_cast<float>(1.0 / f);
        g.ext_factor = 1.0f;
        // ggml_rope_yarn_corr_dims, in float as ggml.
        auto corr = [&](double beta) {
          return static_cast<float>(rot) * std::log(static_cast<float>(orig) / (static_cast<float>(beta) * 2.0f * static_cast<float>(kPi))) /
                 (2.0f * std::log(static_cast<float>(p.theta)));
        };
        float lo = corr(p.beta_fast), hi = corr(p.beta_slow);
        if (p.truncate) {
          lo = std::floor(lo);
          hi = std::ceil(hi);
        }
        g.corr_low = std::fmax(0.0f, lo);
        g.corr_high = std::fmin(static_cast<float>(rot) - 1.0f, hi);
        gain /= 1.0 + 0.1 * std::log(f);  // ggml multiplies its own YaRN gain back in
        break;
      }
      case RopeScaling::kLlama3: {
        // llama.cpp's converter: rope_freqs = 1, factor, or 1 / ((1 - smooth) / factor + smooth).
        const double old_len = static_cast<double>(p.original_max_position_embeddings);
        for (std::size_t i = 0; i < half; ++i) {
          const double freq = static_cast<float>(1.0 / std::pow(p.theta, static_cast<double>(2 * i) / dim));
          const double wavelen = 2.0 * kPi / freq;
          if (wavelen < old_len / p.high_freq_factor) continue;
          if (wavelen > old_len / p.low_freq_factor) {
            ff[i] = *p.factor;
            continue;
          }
          if (p.high_freq_factor == p.low_freq_factor) continue;
          const double smooth = (old_len / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
          ff[i] = 1.0 / ((1.0 - smooth) / *p.factor + smooth);
        }
        break;
      }
      case RopeScaling::kLongRope: {
        const std::size_t orig = p.original_max_position_embeddings != 0 ? p.original_max_position_embeddings
                                                                         : p.max_position_embeddings;
        const std::size_t len = p.context_length != 0 ? p.context_length : seq_len;
        ff = len > orig ? p.long_factor : p.short_factor;
        break;
      }
      default: break;
    }
    if (!p.freq_factors.empty())
      for (std::size_t i = 0; i < half; ++i) ff[i] *= p.freq_factors[i];
    bool any = false;
    for (double v : ff) any = any || v != 1.0;
    if (any) g.freq_factors.assign(ff.begin(), ff.end());
    g.freq_base = static_cast<float>(base);
    g.attn_factor = static_cast<float>(gain);
    *out = std::move(g);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rot_dim too large for memory"};
  }
}

}  // namespace posenc
