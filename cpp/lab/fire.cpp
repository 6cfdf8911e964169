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
//
// Threads (parallel.hpp): the bias by rows i, each value computed as on one thread. The backward
// pass sums over every pair (i, j); it takes them a chunk of rows at a time (at most
// fire_chunk_pairs pairs): x(i, j) and its derivatives by rows into ws.fpair; then one task per
// hidden unit u, which adds the chunk's pairs into dw1[u], db1[u], dw2[u][·] in the single-threaded
// order and keeps each pair's back_u = Σ_h G_h w2[u][h] in ws.fback; then by rows each pair's
// ∂x = Σ_u back_u w1[u] in u's order; dc and dL add the pairs' terms in order on the calling
// thread. No sum is regrouped, so the bits are those of one thread.
#include <algorithm>
#include <cmath>

#include "lab/model.hpp"
#include "lab/parallel.hpp"

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

// f(x)_h for every head, rounded to float, into out[h · stride].
void mlp(const FireLayer& f, std::size_t H, double x, float* out, std::size_t stride) {
  double hidden[kFireWidth];
  for (std::size_t u = 0; u < kFireWidth; ++u) hidden[u] = std::max(0.0, f.w1[u] * x + f.b1[u]);
  for (std::size_t h = 0; h < H; ++h) {
    double b = 0.0;
    for (std::size_t u = 0; u < kFireWidth; ++u) b += f.w2[u * H + h] * hidden[u];
    out[h * stride] = static_cast<float>(b);
  }
}

// Rows [i0, i1) of one group's pairs (i, j ≤ i), numbered from (i0, 0): row i's first is first(i).
struct Chunk {
  std::size_t i0, i1;
  std::size_t first(std::size_t i) const { return i * (i + 1) / 2 - i0 * (i0 + 1) / 2; }
  std::size_t pairs() const { return first(i1); }
};

}  // namespace

std::size_t fire_chunk_pairs(std::size_t seq_len) {
  return std::max(seq_len, std::min<std::size_t>(4096, seq_len * (seq_len + 1) / 2));
}

void fire_bias(Model::Impl& m, std::size_t l) {
  const Workspace& ws = m.ws;
  const std::size_t T = ws.seq_len, H = m.config.n_heads;
  const FireLayer f = layer_params(m, l);
  float* bias = m.ws.fbias.data() + l * ws.groups * H * T * T;
  parallel_blocks(ws.groups * T, 1, T * kFireWidth * (H + 1), [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const std::size_t g = r / T, i = r % T;
      const std::size_t* pos = ws.pos.data() + g * T;
      float* out = bias + g * H * T * T + i * T;
      for (std::size_t j = 0; j <= i; ++j) mlp(f, H, normalized(f, pos[i], pos[j]).x, out + j, T * T);
    }
  });
}

void fire_function(const Model::Impl& m, std::size_t l, std::size_t n_points, float* out) {
  const std::size_t H = m.config.n_heads;
  const FireLayer f = layer_params(m, l);
  for (std::size_t k = 0; k < n_points; ++k)
    mlp(f, H, n_points > 1 ? static_cast<double>(k) / static_cast<double>(n_points - 1) : 0.0, out + k * H, 1);
}

double fire_c(const Model::Impl& m, std::size_t l) { return layer_params(m, l).c; }
double fire_L(const Model::Impl& m, std::size_t l) { return layer_params(m, l).L; }

namespace {

// fire_backward's sums: per hidden unit, and dc, dL before the chain to the raw parameters.
struct FireSums {
  std::vector<double> dw1, db1, dw2;
  double dc = 0.0, dL = 0.0;
};

// Chunk ch of group grp's pairs into the sums (the threads as the file's comment says). ws.fpair
// holds pair k's x, ∂x/∂c, ∂x/∂L at 3k … 3k + 2; its x is overwritten by ∂L/∂x once every unit
// has read it.
void backward_chunk(Model::Impl& m, const FireLayer& f, std::size_t grp, const Chunk& ch, FireSums& s) {
  Workspace& ws = m.ws;
  const std::size_t T = ws.seq_len, H = m.config.n_heads, n_rows = ch.i1 - ch.i0;
  const std::size_t* pos = ws.pos.data() + grp * T;
  const double* G = ws.fgrad.data() + grp * H * T * T;
  double *xs = ws.fpair.data(), *back = ws.fback.data();
  parallel_blocks(n_rows, 1, T * 64, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t i = ch.i0 + r0; i < ch.i0 + r1; ++i)
      for (std::size_t j = 0, k = ch.first(i); j <= i; ++j, ++k) {
        const Normalized n = normalized(f, pos[i], pos[j]);
        xs[3 * k] = n.x, xs[3 * k + 1] = n.by_c, xs[3 * k + 2] = n.by_L;
      }
  });
  parallel_tasks(kFireWidth, pool::pool_workers(), [&](std::size_t u, std::size_t) {
    for (std::size_t i = ch.i0, k = 0; i < ch.i1; ++i)
      for (std::size_t j = 0; j <= i; ++j, ++k) {
        const double x = xs[3 * k], a = f.w1[u] * x + f.b1[u];
        if (a <= 0.0) continue;  // ReLU: no gradient through an inactive unit
        double b = 0.0;
        for (std::size_t h = 0; h < H; ++h) {
          const double g = G[(h * T + i) * T + j];
          s.dw2[u * H + h] += g * a;
          b += g * f.w2[u * H + h];
        }
        s.dw1[u] += b * x;
        s.db1[u] += b;
        back[k * kFireWidth + u] = b;
      }
  });
  parallel_blocks(n_rows, 1, T * kFireWidth, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t k = ch.first(ch.i0 + r0); k < ch.first(ch.i0 + r1); ++k) {
      double dx = 0.0;
      for (std::size_t u = 0; u < kFireWidth; ++u)
        if (!(f.w1[u] * xs[3 * k] + f.b1[u] <= 0.0)) dx += back[k * kFireWidth + u] * f.w1[u];
      xs[3 * k] = dx;
    }
  });
  for (std::size_t k = 0; k < ch.pairs(); ++k) {
    s.dc += xs[3 * k] * xs[3 * k + 1];
    s.dL += xs[3 * k] * xs[3 * k + 2];
  }
}

}  // namespace

void fire_backward(Model::Impl& m, std::size_t l) {
  const Workspace& ws = m.ws;
  const std::size_t T = ws.seq_len, H = m.config.n_heads, cap = fire_chunk_pairs(T);
  const Block& bl = m.blocks[l];
  const FireLayer f = layer_params(m, l);
  FireSums s{std::vector<double>(kFireWidth, 0.0), std::vector<double>(kFireWidth, 0.0),
             std::vector<double>(kFireWidth * H, 0.0)};
  for (std::size_t grp = 0; grp < ws.groups; ++grp)
    for (std::size_t i0 = 0; i0 < T;) {
      Chunk ch{i0, i0 + 1};
      while (ch.i1 < T && Chunk{i0, ch.i1 + 1}.pairs() <= cap) ++ch.i1;
      backward_chunk(m, f, grp, ch, s);
      i0 = ch.i1;
    }
  for (std::size_t u = 0; u < kFireWidth; ++u) {
    m.grad(bl.fire_w1)[u] = static_cast<float>(s.dw1[u]);
    m.grad(bl.fire_b1)[u] = static_cast<float>(s.db1[u]);
  }
  for (std::size_t k = 0; k < kFireWidth * H; ++k) m.grad(bl.fire_w2)[k] = static_cast<float>(s.dw2[k]);
  m.grad(bl.fire_c)[0] = static_cast<float>(s.dc * f.dc);
  m.grad(bl.fire_L)[0] = static_cast<float>(s.dL * f.dL);
}

}  // namespace posenc::lab::detail
