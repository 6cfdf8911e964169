#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "kernels/kernels.hpp"
#include "posenc/rope.hpp"

namespace posenc {
namespace {

Status bad(const char* message) { return {StatusCode::kBadArgument, message}; }

bool mul_overflows(std::size_t a, std::size_t b) {
  return b != 0 && a > std::numeric_limits<std::size_t>::max() / b;
}

// Checks shared by apply_rope and rope_cache; fills the float32 copy of inv_freq the fast path uses.
Status check_frequencies(const double* inv_freq, std::size_t rot_dim, const double* pos,
                         std::size_t n_pos, double pos_offset, const RopeApplyOptions& o,
                         std::vector<float>* inv_freq_f) {
  if (rot_dim == 0) return bad("rot_dim must be > 0");
  if (rot_dim % 2 != 0) return bad("rot_dim must be even");
  const bool ggml = o.precision == Precision::kGgml;
  if (inv_freq == nullptr && !ggml) return bad("inv_freq must not be null");
  if (!(std::isfinite(o.attention_factor))) return bad("attention_factor must be finite");
  if (o.layout != RopeLayout::kHalfSplit && o.layout != RopeLayout::kInterleaved)
    return bad("layout is not a known RopeLayout");
  if (o.precision != Precision::kFast && o.precision != Precision::kAccurate && o.precision != Precision::kGgml)
    return bad("precision is not a known Precision");
  if (o.precision == Precision::kGgml) {
    if (o.ggml == nullptr) return bad("precision ggml needs options.ggml (see ggml_rope_params)");
    const GgmlRope& g = *o.ggml;
    if (g.n_dims != rot_dim) return bad("ggml.n_dims must equal rot_dim");
    if (!(std::isfinite(g.freq_base) && g.freq_base > 0.0f)) return bad("ggml.freq_base must be finite and > 0");
    if (!(std::isfinite(g.freq_scale) && g.freq_scale > 0.0f)) return bad("ggml.freq_scale must be finite and > 0");
    if (!std::isfinite(g.ext_factor) || !std::isfinite(g.attn_factor) || !std::isfinite(g.corr_low) ||
        !std::isfinite(g.corr_high))
      return bad("ggml.ext_factor, attn_factor and corr dims must be finite");
    if (!g.freq_factors.empty() && g.freq_factors.size() != rot_dim / 2)
      return {StatusCode::kBadShape, "ggml.freq_factors must have rot_dim / 2 entries"};
    for (float f : g.freq_factors)
      if (!(std::isfinite(f) && f > 0.0f)) return bad("ggml.freq_factors entries must be finite and > 0");
  }
  if (inv_freq != nullptr)
    for (std::size_t k = 0; k < rot_dim / 2; ++k)
      if (!std::isfinite(inv_freq[k])) return bad("inv_freq must be finite");
  if (pos != nullptr) {
    for (std::size_t t = 0; t < n_pos; ++t)
      if (!std::isfinite(pos[t])) return bad("pos must be finite");
  } else if (!std::isfinite(pos_offset) ||
             !std::isfinite(pos_offset + static_cast<double>(n_pos))) {
    return bad("pos_offset must be finite");
  }
  if (inv_freq == nullptr) return Status::Ok();  // kGgml: the angle comes from o.ggml
  try {
    inv_freq_f->assign(inv_freq, inv_freq + rot_dim / 2);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rot_dim too large for memory"};
  }
  return Status::Ok();
}

double position(const double* pos, double pos_offset, std::size_t t) {
  return pos != nullptr ? pos[t] : pos_offset + static_cast<double>(t);
}

kernels::GgmlAngles ggml_angles(const RopeApplyOptions& o) {
  if (o.precision != Precision::kGgml) return {};
  const GgmlRope& g = *o.ggml;
  return {std::pow(g.freq_base, -2.0f / static_cast<float>(g.n_dims)), g.freq_scale, g.ext_factor, g.corr_low,
          g.corr_high, g.attn_factor, g.freq_factors.empty() ? nullptr : g.freq_factors.data()};
}

// c, s [rot_dim/2] for one position, in the precision o asks for.
void tables(float* c, float* s, std::size_t half, double p, const double* inv_freq, const float* inv_freq_f,
            const RopeApplyOptions& o, const kernels::GgmlAngles& g) {
  if (o.precision == Precision::kGgml)
    kernels::rope_tables_ggml(c, s, half, p, g);
  else
    kernels::rope_tables(c, s, half, p, inv_freq, inv_freq_f, o.precision, static_cast<float>(o.attention_factor));
}

}  // namespace

Status apply_rope(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim,
                  const double* inv_freq, std::size_t rot_dim, const double* pos,
                  double pos_offset, const RopeApplyOptions& o) noexcept {
  if (seq_len == 0) return bad("seq_len must be > 0");
  if (n_heads == 0) return bad("n_heads must be > 0");
  if (head_dim == 0) return bad("head_dim must be > 0");
  if (rot_dim > head_dim) return bad("rot_dim must be <= head_dim");
  if (mul_overflows(seq_len, n_heads) || mul_overflows(seq_len * n_heads, head_dim))
    return {StatusCode::kTooLarge, "seq_len * n_heads * head_dim overflows"};
  if (x == nullptr) return bad("x must not be null");
  std::vector<float> inv_freq_f, table;
  if (Status s = check_frequencies(inv_freq, rot_dim, pos, seq_len, pos_offset, o, &inv_freq_f);
      !s.ok())
    return s;
  const std::size_t half = rot_dim / 2;
  try {
    table.resize(o.layout == RopeLayout::kInterleaved ? 2 * rot_dim + rot_dim : rot_dim);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rot_dim too large for memory"};
  }
  float* c = table.data();
  float* s = c + half;
  const kernels::GgmlAngles g = ggml_angles(o);
  for (std::size_t t = 0; t < seq_len; ++t) {
    float* xt = x + t * n_heads * head_dim;
    tables(c, s, half, position(pos, pos_offset, t), inv_freq, inv_freq_f.data(), o, g);
    if (o.layout == RopeLayout::kHalfSplit) {
      kernels::rope_rotate_half_split(xt, n_heads, head_dim, half, c, s);
    } else {
      float* cd = s + half;
      float* sd = cd + rot_dim;
      kernels::rope_expand_interleaved(c, s, half, cd, sd);
      kernels::rope_rotate_interleaved(xt, n_heads, head_dim, rot_dim, cd, sd);
    }
  }
  return Status::Ok();
}

Status rope_cache(float* cos, float* sin, std::size_t n_pos, const double* inv_freq,
                  std::size_t rot_dim, const double* pos, double pos_offset,
                  const RopeApplyOptions& o) noexcept {
  if (n_pos == 0) return bad("n_pos must be > 0");
  if (mul_overflows(n_pos, rot_dim)) return {StatusCode::kTooLarge, "n_pos * rot_dim overflows"};
  if (cos == nullptr || sin == nullptr) return bad("cos and sin must not be null");
  std::vector<float> inv_freq_f;
  if (Status s = check_frequencies(inv_freq, rot_dim, pos, n_pos, pos_offset, o, &inv_freq_f);
      !s.ok())
    return s;
  const std::size_t half = rot_dim / 2;
  const kernels::GgmlAngles g = ggml_angles(o);
  for (std::size_t t = 0; t < n_pos; ++t)
    tables(cos + t * half, sin + t * half, half, position(pos, pos_offset, t), inv_freq, inv_freq_f.data(), o, g);
  return Status::Ok();
}

}  // namespace posenc
