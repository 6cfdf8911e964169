// posenc: the sinusoidal position table of Vaswani et al. 2017, "Attention Is All You Need", §3.5.
#pragma once

#include <cstddef>

#include "posenc/status.hpp"

namespace posenc {

enum class SinusoidalLayout : int {
  kInterleaved = 0,  // [sin ω0, cos ω0, sin ω1, cos ω1, …], ω_i = base^(-2i/d_model): the paper, HF
  kConcat = 1,       // [sin ω0 … sin ω(h-1) | cos ω0 … cos ω(h-1)], h = d_model/2,
                     // ω_i = exp(-i ln(base) / max(h - 1, 1)): tensor2tensor, fairseq
};

struct SinusoidalParams {
  double base = 10000.0;  // the 10000 of the paper; must be finite and > 0
  SinusoidalLayout layout = SinusoidalLayout::kInterleaved;
};

// The rules of params, which sinusoidal, sinusoidal_at and sinusoidal_shift run first (the JS layer
// before it allocates): kBadArgument unless base is finite and > 0 and layout a SinusoidalLayout.
Status sinusoidal_check(const SinusoidalParams& params) noexcept;

// Writes out[seq_len][d_model] (row-major, positions pos = 0 … seq_len-1). Interleaved:
//   out[pos][2i]   = sin(pos / base^(2i / d_model))
//   out[pos][2i+1] = cos(pos / base^(2i / d_model))
// An odd d_model ends with the sin column of the next frequency (the formula, column by column);
// concat pads an odd d_model with a zero column, as tensor2tensor and fairseq do.
// Angles are formed in float64 and reduced mod 2π before the float32 sin/cos, so the error does
// not grow with pos (<= 4e-7 absolute against float64 at any pos).
// Status: kBadArgument if seq_len or d_model is 0 or base is not finite and > 0;
//         kTooLarge if seq_len * d_model overflows size_t. Never throws.
Status sinusoidal(float* out, std::size_t seq_len, std::size_t d_model, const SinusoidalParams& params = {}) noexcept;

// The same rows for arbitrary positions: out[t][d_model] is the row of position pos[t] (finite,
// may be fractional or negative), t < n_pos. Status: as above, plus kBadArgument for a
// non-finite position.
Status sinusoidal_at(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                     const SinusoidalParams& params = {}) noexcept;

// The relative-position matrix M_k, m[d_model][d_model] row-major, with PE(pos + k) = M_k · PE(pos)
// for every pos: one 2x2 rotation [[cos kω, sin kω], [-sin kω, cos kω]] per frequency ω, on the
// pair (2i, 2i+1) (interleaved) or (i, i + d_model/2) (concat), zero elsewhere. k may be any
// finite number, negative too. Status: kBadArgument if d_model is 0 or odd, base or k invalid
// (sinusoidal_shift_check's); kTooLarge if d_model * d_model overflows size_t.
Status sinusoidal_shift(float* m, double k, std::size_t d_model, const SinusoidalParams& params = {}) noexcept;
// sinusoidal_shift's rules (all but m), in its order: d_model even and > 0, sinusoidal_check's, k
// finite, the overflow. sinusoidal_shift runs it first; the JS layer before it allocates.
Status sinusoidal_shift_check(double k, std::size_t d_model, const SinusoidalParams& params = {}) noexcept;

}  // namespace posenc
