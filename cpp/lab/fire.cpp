// FIRE (Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context
// Transformers"): in layer l, head h, the score of query i and key j ≤ i gets
//
//   bias_h(i, j) = f(x(i, j))_h,  x(i, j) = ψ(i − j) / ψ(max(L, i)),  ψ(t) = log(1 + c·t),
//   f(x)_h = Σ_u w2[u][h] · ReLU(w1_u · x + b1_u)     (1 → 32 → n_heads; no output bias: a constant
//                                                    per head would be cancelled by the softmax)
//
// with c = softplus(fire.c) > 0 and the threshold L = softplus(fire.L) > 0 learned per layer: every
// query past L sees its keys at x ∈ [0, 1], however long the row (the progressive interpolation).
// Tensors per block: fire.w1 [32], fire.b1 [32], fire.w2 [32][n_heads], fire.c [1], fire.L [1]. At
// given positions, i and j above are the positions of query and key. The bias is
// [groups][n_heads][seq_len][seq_len] (ws.fbias, rows i, columns j ≤ i; one group for all rows at
// 0 … seq_len − 1, else one per row); the backward pass takes G[g][h][i][j] = Σ over the group's
// rows of ∂loss/∂score (ws.fgrad).
#include <algorithm>
#include <cmath>

#include "lab/model.hpp"

namespace posenc::lab::detail {
namespace {

struct FireLayer {
  const float *w1, *b1, *w2;
  double c, L, dc, dL;  // c, L and their derivatives by the raw fire.c, fire.L
};

FireLayer layer_params(const Model::Impl& m, std::size_t l) {
  const Block& bl = m.blocks[l];
  const double rc = m.param(bl.fire_c)[0], rl = m.param(bl.fire_L)[0];
  return {m.param(bl.fire_w1), m.param(bl.fire_b1), m.param(bl.fire_w2), softplus(rc),
          softplus(rl),        sigmoid(rc),         sigmoid(rl)};
}

// x(i, j) at query position i and key position j ≤ i, with its derivatives by c and by L.
struct Normalized {
  double x, by_c, by_L;
};
Normalized normalized(const FireLayer& f, std::size_t i, std::size_t j) {
  const double t = static_cast<double>(i - j);
  const bool clamped = f.L > static_cast<double>(i);  // max(L, i) = L
  const double M = clamped ? f.L : static_cast<double>(i);
  const double den = std::log1p(f.c * M);
  if (den == 0.0) return {0.0, 0.0, 0.0};  // i = 0 with L at 0: ψ(0) / ψ(0), taken as 0
  const double x = std::log1p(f.c * t) / den;
  const double by_c = (t / (1.0 + f.c * t) - x * M / (1.0 + f.c * M)) / den;
  const double by_L = clamped ? -x * f.c / ((1.0 + f.c * f.L) * den) : 0.0;
  return {x, by_c, by_L};
}

// f(x)_h for every head into out[n_heads].
void mlp(const FireLayer& f, std::size_t H, double x, double* out) {
  double hidden[kFireWidth];
  for (std::size_t u = 0; u < kFireWidth; ++u) hidden[u] = std::max(0.0, f.w1[u] * x + f.b1[u]);
  for (std::size_t h = 0; h < H; ++h) {
    double b = 0.0;
    for (std::size_t u = 0; u < kFireWidth; ++u) b += f.w2[u * H + h] * hidden[u];
    out[h] = b;
  }
}

}  // namespace

void fire_bias(Model::Impl& m, std::size_t l) {
  const Workspace& ws = m.ws;
  const std::size_t T = ws.seq_len, H = m.config.n_heads;
  const FireLayer f = layer_params(m, l);
  std::vector<double> b(H);
  for (std::size_t g = 0; g < ws.groups; ++g) {
    const std::size_t* pos = ws.pos.data() + g * T;
    float* out = m.ws.fbias.data() + (l * ws.groups + g) * H * T * T;
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        mlp(f, H, normalized(f, pos[i], pos[j]).x, b.data());
        for (std::size_t h = 0; h < H; ++h) out[(h * T + i) * T + j] = static_cast<float>(b[h]);
      }
  }
}

void fire_function(const Model::Impl& m, std::size_t l, std::size_t n_points, float* out) {
  const std::size_t H = m.config.n_heads;
  const FireLayer f = layer_params(m, l);
  std::vector<double> b(H);
  for (std::size_t k = 0; k < n_points; ++k) {
    mlp(f, H, n_points > 1 ? static_cast<double>(k) / static_cast<double>(n_points - 1) : 0.0, b.data());
    for (std::size_t h = 0; h < H; ++h) out[k * H + h] = static_cast<float>(b[h]);
  }
}

double fire_c(const Model::Impl& m, std::size_t l) { return layer_params(m, l).c; }
double fire_L(const Model::Impl& m, std::size_t l) { return layer_params(m, l).L; }

void fire_backward(Model::Impl& m, std::size_t l) {
  const Workspace& ws = m.ws;
  const std::size_t T = ws.seq_len, H = m.config.n_heads;
  const Block& bl = m.blocks[l];
  const FireLayer f = layer_params(m, l);
  std::vector<double> dw2(kFireWidth * H, 0.0);
  double dw1[kFireWidth] = {}, db1[kFireWidth] = {}, dc = 0.0, dL = 0.0;
  for (std::size_t grp = 0; grp < ws.groups; ++grp) {
    const std::size_t* pos = ws.pos.data() + grp * T;
    const double* G = ws.fgrad.data() + grp * H * T * T;
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const Normalized n = normalized(f, pos[i], pos[j]);
        double dx = 0.0;
        for (std::size_t u = 0; u < kFireWidth; ++u) {
          const double a = f.w1[u] * n.x + f.b1[u];
          if (a <= 0.0) continue;  // ReLU: no gradient through an inactive unit
          double back = 0.0;
          for (std::size_t h = 0; h < H; ++h) {
            const double g = G[(h * T + i) * T + j];
            dw2[u * H + h] += g * a;
            back += g * f.w2[u * H + h];
          }
          dw1[u] += back * n.x;
          db1[u] += back;
          dx += back * f.w1[u];
        }
        dc += dx * n.by_c;
        dL += dx * n.by_L;
      }
  }
  for (std::size_t u = 0; u < kFireWidth; ++u) {
    m.grad(bl.fire_w1)[u] = static_cast<float>(dw1[u]);
    m.grad(bl.fire_b1)[u] = static_cast<float>(db1[u]);
  }
  for (std::size_t k = 0; k < kFireWidth * H; ++k) m.grad(bl.fire_w2)[k] = static_cast<float>(dw2[k]);
  m.grad(bl.fire_c)[0] = static_cast<float>(dc * f.dc);
  m.grad(bl.fire_L)[0] = static_cast<float>(dL * f.dL);
}

}  // namespace posenc::lab::detail
