// The kernels of one SIMD target, as a table of function pointers (see target.hpp, dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/rope.hpp"

namespace posenc::kernels {

// Tiled attention: kAttentionRows query rows at a time against panels of Kᵀ: for each block of
// kKeyBlock keys, a contiguous [d][kKeyBlock] panel (transpose_keys writes ceil(n / kKeyBlock)).
constexpr std::size_t kAttentionRows = 4;
constexpr std::size_t kKeyBlock = 64;

// Precision::kGgml's angle parameters (posenc::GgmlRope, flattened; theta_scale precomputed).
struct GgmlAngles {
  float theta_scale, freq_scale, ext_factor, corr_low, corr_high, attn_factor;
  const float* freq_factors;  // [half] or null
};

struct KernelTable {
  const char* arch;  // xsimd's name: "sse2", "avx2", "wasm", ...
  // out[n_pos][d_model] for positions pos[t] (pos null: t); inv_freq[(d_model + 1) / 2], float64.
  void (*sinusoidal_interleaved)(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                                 const double* inv_freq) noexcept;
  void (*sinusoidal_concat)(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                            const double* inv_freq) noexcept;
  // RoPE. c, s: [rot_dim/2] tables for one position; cd, sd: [rot_dim] expanded.
  void (*rope_tables)(float* c, float* s, std::size_t half, double pos, const double* inv_freq,
                      const float* inv_freq_f, Precision precision, float scale) noexcept;
  void (*rope_tables_ggml)(float* c, float* s, std::size_t half, double pos, const GgmlAngles& g) noexcept;
  void (*rope_expand_interleaved)(const float* c, const float* s, std::size_t half, float* cd, float* sd) noexcept;
  void (*rope_rotate_half_split)(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t half,
                                 const float* c, const float* s) noexcept;
  void (*rope_rotate_interleaved)(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                                  const float* cd, const float* sd) noexcept;
  // Attention, one row at a time: s[j] = scale * q · k_j for n keys k + j * k_stride; one
  // online-softmax step over logits s[n] (overwritten with exp weights) and values v.
  void (*dot_keys)(float* s, const float* q, const float* k, std::size_t k_stride, std::size_t n,
                   std::size_t d, float scale) noexcept;
  void (*softmax_block)(float* s, std::size_t n, const float* v, std::size_t v_stride, std::size_t dv,
                        float* m, float* l, float* acc) noexcept;
  // Attention, tiled: Kᵀ panels; scores of kAttentionRows rows against one panel's first n keys;
  // the online-softmax step for those rows (m, l [kAttentionRows], acc [kAttentionRows][dv]).
  void (*transpose_keys)(float* panels, const float* k, std::size_t k_stride, std::size_t n, std::size_t d) noexcept;
  // float16 bit patterns widened exactly to float32 (as half::to_float): dst[n] = src[n]; and
  // transpose_keys straight from float16 keys (the same panels, one pass).
  void (*widen_half)(float* dst, const std::uint16_t* src, std::size_t n) noexcept;
  void (*widen_transpose_keys)(float* panels, const std::uint16_t* k, std::size_t k_stride, std::size_t n,
                               std::size_t d) noexcept;
  void (*scores_tile)(float* s, std::size_t ld_s, const float* const* q, const float* panel, std::size_t n,
                      std::size_t d, float scale) noexcept;
  void (*softmax_tile)(float* s, std::size_t ld_s, std::size_t n, const float* v, std::size_t v_stride,
                       std::size_t dv, float* m, float* l, float* acc) noexcept;
};

// The table of the best target this CPU runs (or the one $POSENC_SIMD names, for testing).
const KernelTable& kernel_table() noexcept;

// Every target built into this library ("sse2", "avx2", ...), best last, and whether this CPU runs it.
struct KernelTarget {
  const KernelTable* table;
  bool supported;
};
std::size_t kernel_targets(KernelTarget* out, std::size_t max) noexcept;

}  // namespace posenc::kernels
