// RoPE on x[seq_len][n_heads][head_dim]: per token, the cos/sin tables of its position (kernels
// rope_tables*), then every head's pairs rotated by them. Tokens are independent, so the work is
// split over blocks of tokens of about pool::kTaskBytes each (small inputs stay on the caller);
// each worker has its own tables, and each token is done by one task, so results are bitwise the
// same on any thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "kernels/kernels.hpp"
#include "posenc/rope.hpp"
#include "rope_rules.hpp"
#include "thread_pool.hpp"
#include "refusals.hpp"

namespace posenc {
namespace {

bool mul_overflows(std::size_t a, std::size_t b) { return b != 0 && a > std::numeric_limits<std::size_t>::max() / b; }

// The rules of the rotation's options shared by apply_rope and rope_cache: rot_dim, the gain, layout,
// precision and ggml's parameters; then pos_offset for n_pos positions when there are no positions.
Status check_options(std::size_t rot_dim, std::size_t n_pos, std::optional<double> pos_offset,
                     const RopeApplyOptions& o) {
  if (Status s = check_rot_dim(rot_dim); !s.ok()) return s;
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
  if (pos_offset && (!std::isfinite(*pos_offset) || !std::isfinite(*pos_offset + static_cast<double>(n_pos))))
    return bad("pos_offset must be finite");
  return Status::Ok();
}

// The rules of the tensors apply_rope and rope_cache read (after check_options): inv_freq (unless
// kGgml) and pos; fills the float32 copy of inv_freq the fast path uses.
Status check_frequencies(const double* inv_freq, std::size_t rot_dim, const double* pos, std::size_t n_pos,
                         const RopeApplyOptions& o, std::vector<float>* inv_freq_f) {
  if (inv_freq == nullptr && o.precision != Precision::kGgml) return bad("inv_freq must not be null");
  if (inv_freq != nullptr)
    if (Status s = check_inv_freq(inv_freq, rot_dim); !s.ok()) return s;
  if (pos != nullptr)
    for (std::size_t t = 0; t < n_pos; ++t)
      if (!std::isfinite(pos[t])) return bad("pos must be finite");
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
  return {std::pow(g.freq_base, -2.0f / static_cast<float>(g.n_dims)),
          g.freq_scale,
          g.ext_factor,
          g.corr_low,
          g.corr_high,
          g.attn_factor,
          g.freq_factors.empty() ? nullptr : g.freq_factors.data()};
}

// c, s [rot_dim/2] for one position, in the precision o asks for.
void tables(float* c, float* s, std::size_t half, double p, const double* inv_freq, const float* inv_freq_f,
            const RopeApplyOptions& o, const kernels::GgmlAngles& g) {
  if (o.precision == Precision::kGgml) kernels::rope_tables_ggml(c, s, half, p, g);
  else kernels::rope_tables(c, s, half, p, inv_freq, inv_freq_f, o.precision, static_cast<float>(o.attention_factor));
}

}  // namespace

Status apply_rope_check(std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                        std::optional<double> pos_offset, const RopeApplyOptions& o, std::size_t n_rows) noexcept {
  if (seq_len == 0) return bad("seq_len must be > 0");
  if (n_heads == 0) return bad("n_heads must be > 0");
  if (Status s = check_rot_dim(rot_dim); !s.ok()) return s;  // before head_dim: a head of rot_dim alone
  if (head_dim == 0) return bad("head_dim must be > 0");
  if (Status s = check_rot_placement(head_dim, rot_dim, o.rot_offset); !s.ok()) return s;
  if (o.xpos != nullptr) {
    if (n_rows != 1) return bad("xpos takes one position row, not M-RoPE's");
    if (!(std::isfinite(o.xpos->scale_base) && o.xpos->scale_base > 0.0))
      return bad("xpos.scale_base must be finite and > 0");
    if (!std::isfinite(o.xpos->center)) return bad("xpos.center must be finite");
  }
  if (mul_overflows(seq_len, n_heads) || mul_overflows(seq_len * n_heads, head_dim) || mul_overflows(seq_len, n_rows))
    return {StatusCode::kTooLarge, "seq_len * n_heads * head_dim overflows"};
  return check_options(rot_dim, seq_len * n_rows, pos_offset, o);
}

namespace {

// apply_rope and apply_rope_rows: token t's pair k turns by row pair_row[k] of its positions
// (one row, pair_row null: pos[t] or pos_offset + t; n_rows rows: pos[r * seq_len + t]).
Status rotate(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
              std::size_t rot_dim, const double* pos, double pos_offset, std::size_t n_rows,
              const std::uint8_t* pair_row, const RopeApplyOptions& o) {
  const std::optional<double> offset = pos == nullptr ? std::optional<double>(pos_offset) : std::nullopt;
  if (Status s = apply_rope_check(seq_len, n_heads, head_dim, rot_dim, offset, o, n_rows); !s.ok()) return s;
  if (x == nullptr) return bad("x must not be null");
  std::vector<float> inv_freq_f, table;
  if (Status s = check_frequencies(inv_freq, rot_dim, pos, seq_len * n_rows, o, &inv_freq_f); !s.ok()) return s;
  const std::size_t half = rot_dim / 2;
  if (pair_row != nullptr)
    for (std::size_t k = 0; k < half; ++k)
      if (pair_row[k] >= n_rows && pair_row[k] != kMropeUnrotated) return bad("pair_row entries must be < n_rows");
  // Split over blocks of tokens (each token's tables and heads stay in one task); every worker
  // has its own tables, allocated here.
  const std::size_t table_size =
      (o.layout == RopeLayout::kInterleaved ? 3 * rot_dim : rot_dim) + (n_rows > 1 ? (n_rows + 1) * rot_dim : 0);
  const std::size_t block = pool::rows_per_task(n_heads * head_dim * sizeof(float));
  const std::size_t n_tasks = (seq_len + block - 1) / block, n_workers = n_tasks > 1 ? pool::pool_workers() : 1;
  try {
    table.resize(n_workers * table_size);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rot_dim too large for memory"};
  }
  const kernels::GgmlAngles g = ggml_angles(o);
  // xPos: log ζ_k per pair, and the sign of the exponent (queries +, keys −).
  std::vector<double> log_zeta;
  if (o.xpos != nullptr) {
    try {
      log_zeta.resize(half);
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "rot_dim too large for memory"};
    }
    for (std::size_t k = 0; k < half; ++k) log_zeta[k] = std::log(xpos_zeta(k, rot_dim));
  }
  const double xpos_sign = o.xpos != nullptr && o.xpos->key ? -1.0 : 1.0;
  pool::parallel_for(n_tasks, n_workers, [&](std::size_t task, std::size_t worker) {
    float* c = table.data() + worker * table_size;
    float* s = c + half;
    float* cd = s + half;  // interleaved: expanded tables [rot_dim] each
    float* sd = cd + rot_dim;
    float* rows = c + (o.layout == RopeLayout::kInterleaved ? 3 * rot_dim : rot_dim);  // [n_rows + 1][c | s]
    // Row n_rows: position 0, for the pairs that stay unrotated (kMropeUnrotated).
    if (n_rows > 1)
      tables(rows + n_rows * rot_dim, rows + n_rows * rot_dim + half, half, 0.0, inv_freq, inv_freq_f.data(), o, g);
    for (std::size_t t = task * block; t < std::min(seq_len, (task + 1) * block); ++t) {
      float* xt = x + t * n_heads * head_dim + o.rot_offset;
      if (n_rows == 1) {
        const double p = position(pos, pos_offset, t);
        tables(c, s, half, p, inv_freq, inv_freq_f.data(), o, g);
        if (o.xpos != nullptr) {
          const double e = xpos_sign * (p - o.xpos->center) / o.xpos->scale_base;
          for (std::size_t k = 0; k < half; ++k) {
            const auto f = static_cast<float>(std::exp(e * log_zeta[k]));
            c[k] *= f;
            s[k] *= f;
          }
        }
      } else {
        for (std::size_t r = 0; r < n_rows; ++r)
          tables(rows + r * rot_dim, rows + r * rot_dim + half, half, pos[r * seq_len + t], inv_freq, inv_freq_f.data(),
                 o, g);
        for (std::size_t k = 0; k < half; ++k) {
          const std::size_t r = pair_row[k] == kMropeUnrotated ? n_rows : pair_row[k];
          c[k] = rows[r * rot_dim + k];
          s[k] = rows[r * rot_dim + half + k];
        }
      }
      if (o.layout == RopeLayout::kHalfSplit) {
        kernels::rope_rotate_half_split(xt, n_heads, head_dim, half, c, s);
      } else {
        kernels::rope_expand_interleaved(c, s, half, cd, sd);
        kernels::rope_rotate_interleaved(xt, n_heads, head_dim, rot_dim, cd, sd);
      }
    }
  });
  return Status::Ok();
}

}  // namespace

double xpos_zeta(std::size_t k, std::size_t rot_dim) noexcept {
  return (2.0 * static_cast<double>(k) / static_cast<double>(rot_dim) + 0.4) / 1.4;
}

Status apply_rope(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                  std::size_t rot_dim, const double* pos, double pos_offset, const RopeApplyOptions& o) noexcept {
  return rotate(x, seq_len, n_heads, head_dim, inv_freq, rot_dim, pos, pos_offset, 1, nullptr, o);
}

Status apply_rope_rows(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                       std::size_t rot_dim, const double* pos, std::size_t n_rows, const std::uint8_t* pair_row,
                       const RopeApplyOptions& o) noexcept {
  if (n_rows == 0 || n_rows > 8) return bad("n_rows must be in [1, 8]");
  if (pos == nullptr || pair_row == nullptr) return bad("pos and pair_row must not be null");
  return rotate(x, seq_len, n_heads, head_dim, inv_freq, rot_dim, pos, 0.0, n_rows, pair_row, o);
}

Status mrope_pair_rows(const std::size_t* section, std::size_t n_sections, bool interleaved, std::size_t half,
                       std::uint8_t* pair_row, bool rest_unrotated) noexcept {
  if (n_sections != 3 || section == nullptr) return bad("mrope_section must have 3 entries (t, h, w)");
  if (pair_row == nullptr) return bad("pair_row must not be null");
  if (section[0] > half || section[1] > half || section[2] > half) return bad("mrope_section must sum to rot_dim / 2");
  const std::size_t sum = section[0] + section[1] + section[2];
  if (rest_unrotated ? sum > half : sum != half)
    return bad(rest_unrotated ? "mrope_section must sum to at most rot_dim / 2"
                              : "mrope_section must sum to rot_dim / 2");
  const std::uint8_t rest = rest_unrotated ? kMropeUnrotated : 0;
  for (std::size_t k = 0; k < half; ++k) {
    if (interleaved)
      pair_row[k] = k % 3 == 1 && k < 3 * section[1]                        ? 1
                    : k % 3 == 2 && k < 3 * section[2]                      ? 2
                    : !rest_unrotated || (k % 3 == 0 && k < 3 * section[0]) ? 0
                                                                            : rest;
    else pair_row[k] = k < section[0] ? 0 : k < section[0] + section[1] ? 1 : k < sum ? 2 : rest;
  }
  return Status::Ok();
}

Status mrope_positions(const MropeSegment* segments, std::size_t n_segments, double* pos,
                       std::size_t seq_len) noexcept {
  if (segments == nullptr || pos == nullptr) return bad("segments and pos must not be null");
  std::size_t total = 0;
  for (std::size_t i = 0; i < n_segments; ++i) {
    const MropeSegment& g = segments[i];
    const bool image = g.grid_t != 0 || g.grid_h != 0 || g.grid_w != 0;
    if (image && (g.text != 0 || g.grid_t == 0 || g.grid_h == 0 || g.grid_w == 0))
      return bad("a segment is text (text > 0) or an image grid (grid_t, grid_h, grid_w all > 0)");
    const std::size_t limit = std::size_t{1} << 30;  // tokens per sequence: far past any model's context
    if (g.text > limit || g.grid_t > limit || g.grid_h > limit || g.grid_w > limit ||
        (image && (g.grid_h > limit / g.grid_t || g.grid_w > limit / (g.grid_t * g.grid_h))))
      return {StatusCode::kTooLarge, "a segment holds more than 2^30 tokens"};
    const std::size_t n = image ? g.grid_t * g.grid_h * g.grid_w : g.text;
    if (n == 0) return bad("a segment must hold at least one token");
    if (total > limit) return {StatusCode::kTooLarge, "the segments hold more than 2^30 tokens"};
    total += n;
  }
  if (total != seq_len) return {StatusCode::kBadShape, "seq_len must equal the segments' token count"};
  double next = 0;  // the first id after everything so far
  std::size_t at = 0;
  for (std::size_t i = 0; i < n_segments; ++i) {
    const MropeSegment& g = segments[i];
    if (g.text != 0) {
      for (std::size_t j = 0; j < g.text; ++j, ++at)
        pos[at] = pos[seq_len + at] = pos[2 * seq_len + at] = next + double(j);
      next += double(g.text);
      continue;
    }
    for (std::size_t a = 0; a < g.grid_t; ++a)
      for (std::size_t b = 0; b < g.grid_h; ++b)
        for (std::size_t w = 0; w < g.grid_w; ++w, ++at) {
          pos[at] = next + double(a);
          pos[seq_len + at] = next + double(b);
          pos[2 * seq_len + at] = next + double(w);
        }
    next += double(std::max({g.grid_t, g.grid_h, g.grid_w}));
  }
  return Status::Ok();
}

Status rope_2d_check(std::size_t head_dim, double theta) noexcept {
  if (head_dim == 0 || head_dim % 4 != 0) return bad("head_dim must be a multiple of 4 for 2-D RoPE");
  if (!(std::isfinite(theta) && theta > 0.0)) return bad("theta must be finite and > 0");
  return Status::Ok();
}

Status rope_2d_frequencies(std::size_t head_dim, double theta, double* inv_freq, std::uint8_t* pair_row) noexcept {
  if (Status s = rope_2d_check(head_dim, theta); !s.ok()) return s;
  if (inv_freq == nullptr || pair_row == nullptr) return bad("inv_freq and pair_row must not be null");
  const std::size_t half = head_dim / 2, quarter = head_dim / 4;
  for (std::size_t k = 0; k < half; ++k) {
    const std::size_t i = k < quarter ? 2 * k : 2 * (k - quarter) + 1;  // freqs[::2], then freqs[1::2]
    inv_freq[k] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
    pair_row[k] = k < quarter ? 0 : 1;
  }
  return Status::Ok();
}

Status shift_keys_check(std::optional<double> delta_all, Precision precision) noexcept {
  if (precision == Precision::kGgml) return bad("shift_keys takes precision fast or accurate");
  if (delta_all && !std::isfinite(*delta_all)) return bad("delta must be finite");
  return Status::Ok();
}

Status shift_keys(float* k, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                  std::size_t rot_dim, const double* delta, double delta_all, RopeLayout layout, Precision precision,
                  std::size_t rot_offset) noexcept {
  const std::optional<double> all = delta == nullptr ? std::optional<double>(delta_all) : std::nullopt;
  if (Status s = shift_keys_check(all, precision); !s.ok()) return s;
  std::vector<double> deltas;
  if (delta == nullptr) {
    try {
      deltas.assign(seq_len, delta_all);
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "seq_len too large for memory"};
    }
    delta = deltas.data();
  }
  RopeApplyOptions o{layout, precision, 1.0};
  o.rot_offset = rot_offset;
  return apply_rope(k, seq_len, n_heads, head_dim, inv_freq, rot_dim, delta, 0.0, o);
}

Status rope_cache(float* cos, float* sin, std::size_t n_pos, const double* inv_freq, std::size_t rot_dim,
                  const double* pos, double pos_offset, const RopeApplyOptions& o) noexcept {
  if (n_pos == 0) return bad("n_pos must be > 0");
  if (mul_overflows(n_pos, rot_dim)) return {StatusCode::kTooLarge, "n_pos * rot_dim overflows"};
  if (cos == nullptr || sin == nullptr) return bad("cos and sin must not be null");
  std::vector<float> inv_freq_f;
  const std::optional<double> offset = pos == nullptr ? std::optional<double>(pos_offset) : std::nullopt;
  if (Status s = check_options(rot_dim, n_pos, offset, o); !s.ok()) return s;
  if (Status s = check_frequencies(inv_freq, rot_dim, pos, n_pos, o, &inv_freq_f); !s.ok()) return s;
  const std::size_t half = rot_dim / 2;
  const kernels::GgmlAngles g = ggml_angles(o);
  for (std::size_t t = 0; t < n_pos; ++t)
    tables(cos + t * half, sin + t * half, half, position(pos, pos_offset, t), inv_freq, inv_freq_f.data(), o, g);
  return Status::Ok();
}

}  // namespace posenc
