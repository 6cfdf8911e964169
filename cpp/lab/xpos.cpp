// xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer") in the lab: RoPE's rotation, with
// pair k of the query at position t scaled by ζ_k^(t/γ) and of the key by ζ_k^(−t/γ), so q·k
// carries ζ_k^((i − j)/γ) and decays with the distance. ζ_k and γ are the library's (posenc's
// xpos_zeta and Xpos: ζ_k = (2k/head_dim + 0.4)/1.4, γ 512), positions from 0 (centre 0).
// prepare() builds RoPE's tables first; xpos_tables scales them in place into the queries' tables
// and copies them into the keys' (ws.cos_k, ws.sin_k), [span][head_dim / 2] each. The backward pass
// runs the same rotation transposed on these tables (forward.cpp): (ζR)ᵀ = ζRᵀ.
#include <cmath>

#include "lab/model.hpp"
#include "posenc/rope.hpp"

namespace posenc::lab::detail {

void xpos_tables(Workspace& ws, std::size_t span, std::size_t head_dim) {
  const std::size_t half = head_dim / 2;
  const double gamma = Xpos{}.scale_base;
  ws.cos_k = ws.cos;
  ws.sin_k = ws.sin;
  for (std::size_t t = 0; t < span; ++t)
    for (std::size_t k = 0; k < half; ++k) {
      const double zeta = xpos_zeta(k, head_dim);
      const double e = static_cast<double>(t) / gamma;
      const auto up = static_cast<float>(std::pow(zeta, e)), down = static_cast<float>(std::pow(zeta, -e));
      ws.cos[t * half + k] *= up;
      ws.sin[t * half + k] *= up;
      ws.cos_k[t * half + k] *= down;
      ws.sin_k[t * half + k] *= down;
    }
}

}  // namespace posenc::lab::detail
