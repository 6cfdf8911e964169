/* Rotary position embedding: per-position cos/sin tables, then the rotation of every head.

   Tables, one position pos:   c[k] = scale * cos(a_k), s[k] = scale * sin(a_k),  k < half = rot_dim/2
     Precision::kFast:      a_k = float32(pos) * float32(inv_freq[k]), one float32 rounding (as HF forms it)
     Precision::kAccurate:  a_k = pos * inv_freq[k] in float64, reduced to [-π, π], then rounded
     Precision::kGgml:      ggml's angle (posenc/rope.hpp, GgmlRope): theta = float(pos), a_k from
                            theta / ff[k] with YaRN's ramp, then theta *= theta_scale, all float32
   Rotation of one head x[head_dim] (dims >= rot_dim pass through):
     kHalfSplit:   (x[k], x[k+half])  -> (x[k] c - x[k+half] s,  x[k+half] c + x[k] s)
     kInterleaved: (x[2k], x[2k+1])   -> (x[2k] c - x[2k+1] s,  x[2k+1] c + x[2k] s)
   Half-split works on contiguous runs of N = batch<float>::size pairs. Interleaved uses tables
   expanded once per position to rot_dim lanes, cd = (c0, c0, c1, c1, …) and sd = (-s0, s0, -s1, s1, …),
   so one head is y = x * cd + swap_pairs(x) * sd on N lanes at a time. */

#include <cmath>

#include "kernels/angle.hpp"
#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {
namespace {

struct SwapPairs {
  static constexpr std::uint32_t get(std::size_t i, std::size_t) { return static_cast<std::uint32_t>(i ^ 1); }
};

}  // namespace

void rope_tables(float* c, float* s, std::size_t half, double pos, const double* inv_freq, const float* inv_freq_f,
                 Precision precision, float scale) noexcept {
  std::size_t k = 0;
  if (precision == Precision::kFast) {
    const float p = static_cast<float>(pos);
    for (; k + N <= half; k += N) {
      const auto [sv, cv] = xsimd::sincos(batch(p) * batch::load_unaligned(inv_freq_f + k));
      (cv * scale).store_unaligned(c + k);
      (sv * scale).store_unaligned(s + k);
    }
    for (; k < half; ++k) {
      const float a = p * inv_freq_f[k];
      c[k] = ::cosf(a) * scale;
      s[k] = ::sinf(a) * scale;
    }
    return;
  }
  alignas(batch::arch_type::alignment()) float angle[N];
  for (; k + N <= half; k += N) {
    for (std::size_t l = 0; l < N; ++l) angle[l] = reduced_angle(pos, inv_freq[k + l]);
    const auto [sv, cv] = xsimd::sincos(batch::load_aligned(angle));
    (cv * scale).store_unaligned(c + k);
    (sv * scale).store_unaligned(s + k);
  }
  for (; k < half; ++k) {
    const float a = reduced_angle(pos, inv_freq[k]);
    c[k] = ::cosf(a) * scale;
    s[k] = ::sinf(a) * scale;
  }
}

// No fused multiply-adds here: ggml's YaRN mix rounds each product (a build of ggml with FMA
// contraction differs from one without by up to ~2e-6 at large positions; posenc matches the latter).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void rope_tables_ggml(float* c, float* s, std::size_t half, double pos, const GgmlAngles& g) noexcept {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  alignas(batch::arch_type::alignment()) float angle[N];
  const float gain = g.ext_factor != 0.0f ? g.attn_factor * (1.0f + 0.1f * ::logf(1.0f / g.freq_scale)) : g.attn_factor;
  const float span = ::fmaxf(0.001f, g.corr_high - g.corr_low);
  float theta = static_cast<float>(pos);
  std::size_t k = 0;
  while (k < half) {
    const std::size_t n = half - k < N ? half - k : N;
    for (std::size_t l = 0; l < n; ++l) {
      const float extrap = g.freq_factors != nullptr ? theta / g.freq_factors[k + l] : theta;
      const float interp = g.freq_scale * extrap;
      float a = interp;
      if (g.ext_factor != 0.0f) {
        const float y = (static_cast<float>(k + l) - g.corr_low) / span;
        const float mix = (1.0f - ::fminf(1.0f, ::fmaxf(0.0f, y))) * g.ext_factor;
        a = interp * (1.0f - mix) + extrap * mix;
      }
      angle[l] = a;
      theta *= g.theta_scale;
    }
    if (n == N) {
      const auto [sv, cv] = xsimd::sincos(batch::load_aligned(angle));
      (cv * gain).store_unaligned(c + k);
      (sv * gain).store_unaligned(s + k);
    } else {
      for (std::size_t l = 0; l < n; ++l) {
        c[k + l] = ::cosf(angle[l]) * gain;
        s[k + l] = ::sinf(angle[l]) * gain;
      }
    }
    k += n;
  }
}

void rope_expand_interleaved(const float* c, const float* s, std::size_t half, float* cd, float* sd) noexcept {
  for (std::size_t k = 0; k < half; ++k) {
    cd[2 * k] = cd[2 * k + 1] = c[k];
    sd[2 * k] = -s[k];
    sd[2 * k + 1] = s[k];
  }
}

void rope_rotate_half_split(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t half, const float* c,
                            const float* s) noexcept {
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* x1 = x + h * head_dim;
    float* x2 = x1 + half;
    std::size_t k = 0;
    for (; k + N <= half; k += N) {
      const batch a = batch::load_unaligned(x1 + k), b = batch::load_unaligned(x2 + k);
      const batch cv = batch::load_unaligned(c + k), sv = batch::load_unaligned(s + k);
      (a * cv - b * sv).store_unaligned(x1 + k);
      (b * cv + a * sv).store_unaligned(x2 + k);
    }
    for (; k < half; ++k) {
      const float a = x1[k], b = x2[k];
      x1[k] = a * c[k] - b * s[k];
      x2[k] = b * c[k] + a * s[k];
    }
  }
}

void rope_rotate_interleaved(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim, const float* cd,
                             const float* sd) noexcept {
  constexpr auto swap = xsimd::make_batch_constant<std::uint32_t, batch::arch_type, SwapPairs>();
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    std::size_t j = 0;
    for (; j + N <= rot_dim; j += N) {
      const batch v = batch::load_unaligned(xh + j);
      (v * batch::load_unaligned(cd + j) + xsimd::swizzle(v, swap) * batch::load_unaligned(sd + j))
          .store_unaligned(xh + j);
    }
    for (; j < rot_dim; j += 2) {
      const float a = xh[j], b = xh[j + 1];
      xh[j] = a * cd[j] + b * sd[j];
      xh[j + 1] = b * cd[j + 1] + a * sd[j + 1];
    }
  }
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
