// KERPLE (Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length
// Extrapolation"): head h's score of query i and key j ≤ i gets, with t = i − j ≥ 0,
//
//   log variant:    bias_h(t) = −r1_h · log(1 + r2_h · t)
//   power variant:  bias_h(t) = −r1_h · t^r2_h  (0 at t = 0); the paper allows 0 < r2_h ≤ 2, here
//                   r2_h = 2 · sigmoid(raw) lies in (0, 2)
//
// one (r1, r2) per head, shared by the layers (this lab's choice, as t5_bias is), from the raw
// tensors kerple_r1, kerple_r2 [n_heads] through the positivity maps (kerple_head, model.hpp). The
// bias depends on t only, so it is one table ws.kbias [n_heads][span]; the backward pass sums
// ∂L/∂bias per head and distance into ws.kgrad (forward.cpp), and kerple_backward turns that into
// the raw parameters' gradients: Σ_t kgrad[h][t] · ∂bias/∂r, times the map's derivative.
#include <cmath>

#include "lab/model.hpp"

namespace posenc::lab::detail {
namespace {

// The bias of distance t ≥ 0 and its derivatives by r1 and r2.
struct KerpleTerm {
  double bias, by_r1, by_r2;
};
KerpleTerm kerple_term(Scheme scheme, const KerpleHead& k, double t) {
  if (scheme == Scheme::kKerplePower) {
    if (t == 0.0) return {0.0, 0.0, 0.0};
    const double p = std::pow(t, k.r2);
    return {-k.r1 * p, -p, -k.r1 * p * std::log(t)};
  }
  const double l = std::log1p(k.r2 * t);
  return {-k.r1 * l, -l, -k.r1 * t / (1.0 + k.r2 * t)};
}

}  // namespace

void kerple_bias(Model::Impl& m) {
  Workspace& ws = m.ws;
  const std::size_t H = m.config.n_heads, span = ws.span;
  ws.kbias.assign(H * span, 0.0f);
  ws.kgrad.assign(H * span, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    const KerpleHead k = kerple_head(m, h);
    for (std::size_t t = 0; t < span; ++t)
      ws.kbias[h * span + t] = static_cast<float>(kerple_term(m.config.scheme, k, static_cast<double>(t)).bias);
  }
}

void kerple_backward(Model::Impl& m) {
  const Workspace& ws = m.ws;
  for (std::size_t h = 0; h < m.config.n_heads; ++h) {
    const KerpleHead k = kerple_head(m, h);
    double g1 = 0.0, g2 = 0.0;
    for (std::size_t t = 0; t < ws.span; ++t) {
      const KerpleTerm e = kerple_term(m.config.scheme, k, static_cast<double>(t));
      g1 += ws.kgrad[h * ws.span + t] * e.by_r1;
      g2 += ws.kgrad[h * ws.span + t] * e.by_r2;
    }
    m.grad(m.kerple_r1)[h] = static_cast<float>(g1 * k.dr1);
    m.grad(m.kerple_r2)[h] = static_cast<float>(g2 * k.dr2);
  }
}

}  // namespace posenc::lab::detail
