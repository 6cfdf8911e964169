/* Sinusoidal tables (Vaswani et al. 2017, §3.5), out row-major [seq_len][d_model], pos = 0 … seq_len-1.

   interleaved:  out[pos][2i] = sin(pos * w_i),  out[pos][2i+1]   = cos(pos * w_i)
   concat:       out[pos][i]  = sin(pos * w_i),  out[pos][h + i]  = cos(pos * w_i),  h = d_model/2
   Row t holds position pos[t] when positions are given (else t).
   w_i = inv_freq[i] in float64, from the caller (the two layouts use different series).

   Per row, N = batch<float>::size pairs at a time: the N angles pos * w_i are formed and reduced
   to [-π, π] in float64 (reduced_angle), one float32 sincos gives N sines and N cosines, and
   zip_lo/zip_hi interleave them into 2N consecutive outputs (concat stores the two runs as they
   are). Pairs past the last full batch, and the lone last column of an odd d_model (sin when
   interleaved, zero when concat), take the same angles through sinf/cosf. */

#include <cmath>

#include "kernels/angle.hpp"
#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

namespace {

// Both layouts: the same angles and sincos; only where the sines and cosines are stored differs.
template <bool kConcat>
void sinusoidal_rows(float* out, const double* positions, std::size_t seq_len, std::size_t d_model,
                     const double* inv_freq) noexcept {
  const std::size_t half = d_model / 2;
  const std::size_t n_vec = half - half % N;
  alignas(batch::arch_type::alignment()) float angle[N];

  for (std::size_t pos = 0; pos < seq_len; ++pos) {
    float* row = out + pos * d_model;
    const double p = positions != nullptr ? positions[pos] : static_cast<double>(pos);
    std::size_t i = 0;
    for (; i < n_vec; i += N) {
      for (std::size_t l = 0; l < N; ++l) angle[l] = reduced_angle(p, inv_freq[i + l]);
      const auto [s, c] = xsimd::sincos(batch::load_aligned(angle));
      if constexpr (kConcat) {
        s.store_unaligned(row + i);
        c.store_unaligned(row + half + i);
      } else {
        xsimd::zip_lo(s, c).store_unaligned(row + 2 * i);
        xsimd::zip_hi(s, c).store_unaligned(row + 2 * i + N);
      }
    }
    for (; i < half; ++i) {
      const float a = reduced_angle(p, inv_freq[i]);
      row[kConcat ? i : 2 * i] = ::sinf(a);
      row[kConcat ? half + i : 2 * i + 1] = ::cosf(a);
    }
    if (d_model % 2 != 0) row[d_model - 1] = kConcat ? 0.0f : ::sinf(reduced_angle(p, inv_freq[half]));
  }
}

}  // namespace

void sinusoidal_interleaved(float* out, const double* positions, std::size_t seq_len, std::size_t d_model,
                            const double* inv_freq) noexcept {
  sinusoidal_rows<false>(out, positions, seq_len, d_model, inv_freq);
}

void sinusoidal_concat(float* out, const double* positions, std::size_t seq_len, std::size_t d_model,
                       const double* inv_freq) noexcept {
  sinusoidal_rows<true>(out, positions, seq_len, d_model, inv_freq);
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
