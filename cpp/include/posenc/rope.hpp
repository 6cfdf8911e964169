// posenc: rotary position embedding (RoPE; Su et al. 2021, "RoFormer") with the scaling schemes of
// Hugging Face transformers' modeling_rope_utils.py, to the same formulas and defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "posenc/status.hpp"

namespace posenc {

enum class RopeScaling : int {
  kNone = 0,      // inv_freq[i] = theta^(-2i/rot_dim)
  kLinear,        // position interpolation: inv_freq / factor
  kNtk,           // static NTK-aware base: theta * factor^(rot_dim / (rot_dim - 2))
  kDynamic,       // dynamic NTK: the NTK base grows with seq_len past max_position_embeddings
  kYarn,          // YaRN (Peng et al. 2023): per-pair ramp between interpolation and extrapolation
  kLlama3,        // Llama 3.1: wavelength bands (low/high_freq_factor) divided by factor or kept
  kLongRope,      // LongRoPE / Phi-3: per-pair short or long rescale factors
  kProportional,  // proportional partial rotation: head_dim/2 pairs, the rotated ones use 2k/head_dim
};

constexpr int kNumRopeScalings = 8;
// "none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional".
const char* rope_scaling_name(RopeScaling scaling) noexcept;

enum class RopeLayout : int {
  kHalfSplit = 0,    // pairs (i, i + rot_dim/2): GPT-NeoX, HF Llama, ONNX interleaved=0
  kInterleaved = 1,  // pairs (2i, 2i+1): RoFormer, GPT-J, llama.cpp LLAMA_ROPE_TYPE_NORM, ONNX interleaved=1
};

struct RopeParams {
  std::size_t head_dim = 0;            // required
  std::size_t rot_dim = 0;             // 0: int(head_dim * partial_rotary_factor), as HF does
  double partial_rotary_factor = 1.0;  // in (0, 1]
  double theta = 10000.0;              // rope_theta, finite and > 0
  RopeScaling scaling = RopeScaling::kNone;
  std::optional<double> factor;                      // linear/ntk/dynamic/llama3 require it; yarn/longrope derive it
                                                     // from max / original max position embeddings when unset
  std::size_t original_max_position_embeddings = 0;  // yarn, llama3, longrope (0 = unset)
  std::size_t max_position_embeddings = 0;           // dynamic; the derived yarn/longrope factor
  double beta_fast = 32.0;                           // yarn
  double beta_slow = 1.0;                            // yarn
  double mscale = 0.0;                               // yarn: both mscale and mscale_all_dim non-zero →
  double mscale_all_dim = 0.0;             //   attention_factor = get_mscale(f, mscale) / get_mscale(f, mscale_all_dim)
  std::optional<double> attention_factor;  // overrides the scheme's default
  bool truncate = true;                    // yarn: floor/ceil the correction range
  double low_freq_factor = 1.0;            // llama3
  double high_freq_factor = 4.0;           // llama3
  std::vector<double> short_factor;        // longrope: rot_dim/2 values each
  std::vector<double> long_factor;
  std::size_t context_length = 0;          // longrope: 0 = HF's switch (long factors iff seq_len >
                                           //   original_max_position_embeddings); else llama.cpp's
                                           //   (iff context_length, its n_ctx per sequence, is)
  std::vector<double> freq_factors;        // any scheme: rot_dim/2 per-pair divisors applied after the
                                           //   scaling (llama.cpp's freq_factors, e.g. a GGUF's
                                           //   rope_freqs.weight for Llama 3.1), or empty
  std::vector<std::size_t> mrope_section;  // M-RoPE (Qwen2-VL): pairs per position row (t, h, w),
  bool mrope_interleaved = false;          //   summing to rot_dim/2; interleaved: Qwen3-VL's layout
  bool mrope_rest_unrotated = false;       // the pairs no section claims: HF turns them by the
                                           //   temporal id (false); llama.cpp by its 4th position
                                           //   id, 0 for text and images, so they stay unrotated
                                           //   (true; the sections may then sum to less)
  // Where the rotation sits in a head — what the model does, which apply_rope takes as options:
  std::size_t rot_offset = 0;                  // first rotated dim: dims [rot_offset, rot_offset + rot_dim)
                                               //   turn (DeepSeek-V2/V3's MLA: the rope part follows the
                                               //   nope part, rot_offset = qk_nope_head_dim); the rest pass
  RopeLayout layout = RopeLayout::kHalfSplit;  // the model's pair layout (HF rotate_half: half-split;
                                               //   llama.cpp NORM: interleaved, NEOX: half-split)
};

// The number of rotated dimensions params describe (head_dim for kProportional, whose unrotated
// pairs get inv_freq 0), or 0 if params are invalid.
std::size_t rope_rot_dim(const RopeParams& params) noexcept;

// Writes inv_freq[rope_rot_dim(params) / 2] (radians per position, float64; divided by
// freq_factors when given) and the factor HF multiplies cos and sin by (*attention_factor:
// params.attention_factor when set, else the scheme's — yarn's and longrope's — else 1).
// seq_len matters only for kDynamic (NTK base grows once seq_len > max_position_embeddings) and
// kLongRope (long factors iff seq_len > original_max_position_embeddings, unless context_length
// is set); pass 0 for "at init time".
// Status: kBadArgument naming the parameter and its rule (odd, zero or too large rot_dim or
// rot_offset,
// non-finite theta or factor, factor < 1, a missing parameter the scheme needs, ...);
// kBadShape if n_freq != rope_rot_dim(params) / 2 or a factor list has the wrong length.
Status rope_frequencies(const RopeParams& params, std::size_t seq_len, double* inv_freq, std::size_t n_freq,
                        double* attention_factor) noexcept;

// YaRN helpers, exposed for plots and tests (HF's find_correction_range and get_mscale).
// The range is clamped to [0, rot_dim - 1]; floored/ceiled first when truncate is set.
void yarn_correction_range(double beta_fast, double beta_slow, std::size_t rot_dim, double theta,
                           double original_max_position_embeddings, bool truncate, double* low, double* high) noexcept;
double yarn_get_mscale(double scale, double mscale = 1.0) noexcept;
// YaRN's attention factor (HF's _compute_yarn_parameters): get_mscale(factor, mscale) /
// get_mscale(factor, mscale_all_dim) when both are non-zero, else get_mscale(factor).
double yarn_attention_factor(double factor, double mscale, double mscale_all_dim) noexcept;

// "half_split", "interleaved" (the JS API's names are their camelCase: 'halfSplit').
const char* rope_layout_name(RopeLayout layout) noexcept;
constexpr int kNumRopeLayouts = 2;

enum class Precision : int {
  kFast = 0,      // angle = float32(pos) * float32(inv_freq), one float32 product (HF's forward,
                  //   given HF's float32 inv_freq table)
  kAccurate = 1,  // angle formed in float64 and reduced mod 2π before the float32 sin/cos
  kGgml = 2,      // angle formed as ggml's CPU RoPE does (GgmlRope below): reproduces llama.cpp
};

// ggml_rope_ext's parameters (llama.cpp), which kGgml forms the angle from, in float32 as ggml:
//   theta_scale = powf(freq_base, -2/n_dims); theta = float(pos), then per pair k:
//     extrap = theta / freq_factors[k];  interp = freq_scale * extrap;
//     ext_factor != 0:  ramp = (1 - clamp((k - corr_low) / max(0.001, corr_high - corr_low), 0, 1)) * ext_factor
//                       angle = interp (1 - ramp) + extrap ramp;  gain = attn_factor (1 + 0.1 ln(1 / freq_scale))
//     else:             angle = interp;                         gain = attn_factor
//     c[k] = cos(angle) gain, s[k] = sin(angle) gain;  theta *= theta_scale   (one rounding per pair)
// "fast", "accurate", "ggml".
const char* precision_name(Precision precision) noexcept;
constexpr int kNumPrecisions = 3;

struct GgmlRope {
  std::size_t n_dims = 0;  // rot_dim
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float corr_low = 0.0f, corr_high = 0.0f;  // ggml_rope_yarn_corr_dims
  std::vector<float> freq_factors;          // rot_dim/2 divisors, or empty
};

// The ggml parameters that give params' frequencies and gain (as llama.cpp runs the model):
// none, linear (freq_scale = 1/factor), ntk and dynamic (a larger freq_base), yarn (ext_factor 1,
// correction dims floored/ceiled unless params.truncate is false — GGUF files always truncate),
// llama3 (per-pair freq_factors, as llama.cpp's converter writes rope_freqs), longrope (the
// chosen factors as freq_factors), params.freq_factors multiplied in. seq_len as for
// rope_frequencies. Status as rope_frequencies; kBadArgument for kProportional (no ggml form).
Status ggml_rope_params(const RopeParams& params, std::size_t seq_len, GgmlRope* out) noexcept;

// xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer"): RoPE whose pair k is also scaled,
// by ζ_k^((p − center) / scale_base) on a query at position p and by ζ_k^(−(p − center) / scale_base)
// on a key, ζ_k = (2k / rot_dim + 0.4) / 1.4 — so q_n·k_m carries ζ_k^((n − m) / scale_base) and
// decays with the distance. center only moves both exponents (it cancels in q·k); torchscale
// centres positions to keep ζ^e within float range at long lengths.
struct Xpos {
  double scale_base = 512.0;  // γ, finite and > 0
  bool key = false;           // false: the queries' scale, true: the keys'
  double center = 0.0;
};
// ζ_k of pair k of rot_dim rotated dims, (2k / rot_dim + 0.4) / 1.4, as Xpos says (apply_rope's and
// the lab's xpos scheme's).
double xpos_zeta(std::size_t k, std::size_t rot_dim) noexcept;

struct RopeApplyOptions {
  RopeLayout layout = RopeLayout::kHalfSplit;
  Precision precision = Precision::kFast;
  double attention_factor = 1.0;   // multiplies cos and sin (HF's attention_scaling); not for kGgml
  const GgmlRope* ggml = nullptr;  // kGgml: the angle's parameters (inv_freq is then unused and
                                   // may be null; rot_dim must equal ggml->n_dims)
  std::size_t rot_offset = 0;      // the rotated dims are [rot_offset, rot_offset + rot_dim) of each head
  const Xpos* xpos = nullptr;      // apply_rope only (one position row): xPos's per-pair scale
};

// Rotates x[seq_len][n_heads][head_dim] in place. Token s is at position pos[s] (pos may be null:
// then pos_offset + s). The pair k turns by pos * inv_freq[k]; dims outside [rot_offset,
// rot_offset + rot_dim) pass through (options.rot_offset, 0 by default).
// Rotating by -pos undoes +pos (up to float rounding). With options.xpos, pair k is also scaled
// as Xpos says.
// Status: kBadArgument for zero sizes, odd or zero rot_dim, rot_offset + rot_dim > head_dim, a
// non-finite inv_freq, position or attention_factor, a bad xpos; kTooLarge when the extents overflow.
Status apply_rope(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                  std::size_t rot_dim, const double* pos, double pos_offset,
                  const RopeApplyOptions& options = {}) noexcept;

// apply_rope's argument rules that need no tensor (all but x, inv_freq and pos), in apply_rope's
// order: seq_len and n_heads, rot_dim even and > 0, head_dim, rot_dim and options.rot_offset within
// the head, xpos, overflow, the gain, layout, precision (kGgml: options.ggml's parameters) and pos_offset (given
// when there are no positions: nullopt when pos is). n_rows: apply_rope_rows' rows of positions.
// apply_rope runs it first; a caller can run it before it allocates the tensors (the JS layer does).
Status apply_rope_check(std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                        std::optional<double> pos_offset, const RopeApplyOptions& options = {},
                        std::size_t n_rows = 1) noexcept;

// Moves cached keys k[seq_len][n_heads][head_dim], rotated by apply_rope at positions p, to
// positions p + delta[s] (delta null: delta_all for every token), in place — llama.cpp's context
// shift. It rotates by delta alone with gain 1, so an attention factor already in k is kept, not
// applied twice; the exact inverse of shifting by -delta (up to float rounding). Status as
// apply_rope; kBadArgument for Precision::kGgml (use fast or accurate).
// shift_keys' own rules, which it runs first (then apply_rope's): precision fast or accurate and,
// without per-token deltas (delta_all given; nullopt when delta is), a finite delta_all.
Status shift_keys_check(std::optional<double> delta_all, Precision precision) noexcept;
Status shift_keys(float* k, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                  std::size_t rot_dim, const double* delta, double delta_all,
                  RopeLayout layout = RopeLayout::kHalfSplit, Precision precision = Precision::kFast,
                  std::size_t rot_offset = 0) noexcept;

// Multi-axis RoPE: every token has n_rows position ids, pos[n_rows][seq_len], and pair k turns by
// pos[pair_row[k]][s] * inv_freq[k] (pair_row[k] == kMropeUnrotated: by position 0, cos = the
// gain, sin = 0). M-RoPE (Qwen2-VL, mrope_pair_rows) and 2-D axial RoPE for vision transformers
// (Pixtral, rope_2d_frequencies) are instances. Status as apply_rope; kBadArgument if n_rows is 0
// or > 8 or a pair_row entry is >= n_rows (and not kMropeUnrotated).
constexpr std::uint8_t kMropeUnrotated = 255;
Status apply_rope_rows(float* x, std::size_t seq_len, std::size_t n_heads, std::size_t head_dim, const double* inv_freq,
                       std::size_t rot_dim, const double* pos, std::size_t n_rows, const std::uint8_t* pair_row,
                       const RopeApplyOptions& options = {}) noexcept;

// M-RoPE's pair → row map (HF Qwen2-VL apply_multimodal_rotary_pos_emb): section[0..2] pairs for
// the temporal, height and width ids, summing to half = rot_dim/2, in consecutive runs; with
// interleaved (Qwen3-VL apply_interleaved_mrope): pair k is height iff k % 3 == 1 and k < 3·section[1],
// width iff k % 3 == 2 and k < 3·section[2], else temporal. rest_unrotated: llama.cpp's
// ggml_rope_multi instead — temporal only iff k % 3 == 0 and k < 3·section[0] (interleaved) or
// k < the three sections (consecutive), the other pairs kMropeUnrotated; the sections may sum to
// less than half. Status: kBadArgument naming the rule.
Status mrope_pair_rows(const std::size_t* section, std::size_t n_sections, bool interleaved, std::size_t half,
                       std::uint8_t* pair_row, bool rest_unrotated = false) noexcept;

// Qwen2-VL's get_rope_index for one sequence of text runs and image grids (t × h × w language-model
// tokens, after the spatial merge): text tokens continue at the previous maximum + 1 with the same
// id in all three rows; an image starting at s has ids (s + t_i, s + h_i, s + w_i), row-major.
struct MropeSegment {
  std::size_t text = 0;                            // a run of text tokens, or
  std::size_t grid_t = 0, grid_h = 0, grid_w = 0;  // an image grid (all three > 0)
};
// Writes pos[3][seq_len]; seq_len must equal the segments' token count.
Status mrope_positions(const MropeSegment* segments, std::size_t n_segments, double* pos, std::size_t seq_len) noexcept;

// 2-D axial RoPE (HF PixtralRotaryEmbedding): freqs_i = theta^(-2i/head_dim), i < head_dim/2; the
// first head_dim/4 pairs turn by the patch row with freqs_0, freqs_2, …, the others by the column
// with freqs_1, freqs_3, … Writes inv_freq[head_dim/2] and pair_row[head_dim/2] (0 row, 1 column)
// for apply_rope_rows with pos [2][n_patches] = (row, column). Status: rope_2d_check's.
Status rope_2d_frequencies(std::size_t head_dim, double theta, double* inv_freq, std::uint8_t* pair_row) noexcept;
// 2-D RoPE's rules, which rope_2d_frequencies runs first (the JS layer before it allocates):
// kBadArgument unless head_dim is a multiple of 4 (half the pairs by row, half by column) and
// theta finite and > 0.
Status rope_2d_check(std::size_t head_dim, double theta) noexcept;

// The cos/sin cache of ONNX RotaryEmbedding: cos[n_pos][rot_dim/2], sin[n_pos][rot_dim/2] for
// positions pos[t] (or pos_offset + t when pos is null), each value times attention_factor.
Status rope_cache(float* cos, float* sin, std::size_t n_pos, const double* inv_freq, std::size_t rot_dim,
                  const double* pos, double pos_offset, const RopeApplyOptions& options = {}) noexcept;

}  // namespace posenc
