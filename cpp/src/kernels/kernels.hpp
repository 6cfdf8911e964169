// Internal kernel entry points. Their .cpp files are the only place that includes xsimd; callers
// (cpp/src/*.cpp) have already checked every shape and argument.
#pragma once

#include <cstddef>

#include "posenc/rope.hpp"

namespace posenc::kernels {

const char* arch_name() noexcept;

// out[n_pos][d_model] for positions pos[t] (pos null: t); inv_freq[(d_model + 1) / 2] in
// float64. See sinusoidal.cpp.
void sinusoidal_interleaved(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                            const double* inv_freq) noexcept;
void sinusoidal_concat(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                       const double* inv_freq) noexcept;

// RoPE (see rope.cpp). c, s: [rot_dim/2] tables for one position; cd, sd: [rot_dim] expanded.
void rope_tables(float* c, float* s, std::size_t half, double pos, const double* inv_freq,
                 const float* inv_freq_f, Precision precision, float scale) noexcept;
void rope_expand_interleaved(const float* c, const float* s, std::size_t half, float* cd,
                             float* sd) noexcept;
void rope_rotate_half_split(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t half,
                            const float* c, const float* s) noexcept;
void rope_rotate_interleaved(float* x, std::size_t n_heads, std::size_t head_dim,
                             std::size_t rot_dim, const float* cd, const float* sd) noexcept;

// Attention (see attention.cpp). s[j] = scale * q · k_j for n keys k + j * k_stride.
void dot_keys(float* s, const float* q, const float* k, std::size_t k_stride, std::size_t n,
              std::size_t d, float scale) noexcept;
// One online-softmax step over logits s[n] (overwritten with exp weights) and values v.
void softmax_block(float* s, std::size_t n, const float* v, std::size_t v_stride, std::size_t dv,
                   float* m, float* l, float* acc) noexcept;

// Tiled attention: kAttentionRows query rows at a time against panels of Kᵀ: for each block of
// kKeyBlock keys, a contiguous [d][kKeyBlock] panel (transpose_keys writes ceil(n / kKeyBlock)).
constexpr std::size_t kAttentionRows = 4;
constexpr std::size_t kKeyBlock = 64;
void transpose_keys(float* panels, const float* k, std::size_t k_stride, std::size_t n,
                    std::size_t d) noexcept;
// s [kAttentionRows][ld_s] = scale * q_r · k_j for the first n keys of one panel.
void scores_tile(float* s, std::size_t ld_s, const float* const* q, const float* panel,
                 std::size_t n, std::size_t d, float scale) noexcept;
// Online-softmax step for kAttentionRows rows: m, l [kAttentionRows], acc [kAttentionRows][dv].
void softmax_tile(float* s, std::size_t ld_s, std::size_t n, const float* v, std::size_t v_stride,
                  std::size_t dv, float* m, float* l, float* acc) noexcept;

}  // namespace posenc::kernels
