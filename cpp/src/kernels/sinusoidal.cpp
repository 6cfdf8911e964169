/* Sinusoidal table, interleaved layout (Vaswani et al. 2017, §3.5).

   out[pos][2i]   = sin(pos * w_i)        w_i = inv_freq[i] = base^(-2i / d_model), float64
   out[pos][2i+1] = cos(pos * w_i)        pos = 0 … seq_len-1, out row-major [seq_len][d_model]

   Per row, N = batch<float>::size pairs at a time: the N angles pos * w_i are formed and reduced
   to [-π, π] in float64 (reduced_angle), one float32 sincos gives N sines and N cosines, and
   zip_lo/zip_hi interleave them into 2N consecutive outputs. Pairs past the last full batch, and
   the lone sin column of an odd d_model, take the same angles through std::sin/std::cos. */
#include <xsimd/xsimd.hpp>

#include <cmath>

#include "kernels/angle.hpp"
#include "kernels/kernels.hpp"

namespace posenc::kernels {

void sinusoidal_interleaved(float* out, std::size_t seq_len, std::size_t d_model,
                            const double* inv_freq) noexcept {
  using batch = xsimd::batch<float>;
  constexpr std::size_t N = batch::size;
  const std::size_t n_pairs = d_model / 2;
  const std::size_t n_vec = n_pairs - n_pairs % N;
  alignas(batch::arch_type::alignment()) float angle[N];

  for (std::size_t pos = 0; pos < seq_len; ++pos) {
    float* row = out + pos * d_model;
    const double p = static_cast<double>(pos);
    std::size_t i = 0;
    for (; i < n_vec; i += N) {
      for (std::size_t l = 0; l < N; ++l) angle[l] = reduced_angle(p, inv_freq[i + l]);
      const auto [s, c] = xsimd::sincos(batch::load_aligned(angle));
      xsimd::zip_lo(s, c).store_unaligned(row + 2 * i);
      xsimd::zip_hi(s, c).store_unaligned(row + 2 * i + N);
    }
    for (; i < n_pairs; ++i) {
      const float a = reduced_angle(p, inv_freq[i]);
      row[2 * i] = std::sin(a);
      row[2 * i + 1] = std::cos(a);
    }
    if (d_model % 2 != 0) row[d_model - 1] = std::sin(reduced_angle(p, inv_freq[n_pairs]));
  }
}

}  // namespace posenc::kernels
