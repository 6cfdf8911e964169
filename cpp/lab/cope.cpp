// CoPE (Golovneva et al. 2024, "Contextual Position Encoding: Learning to Count What's Important"):
// positions that count what the model attends to. In layer l, head h, for query i and key j ≤ i,
// with s_ij = q_i·k_j / √head_dim the scaled content score (after any bias):
//
//   g_ij = σ(s_ij),   p_ij = Σ_{t=j..i} g_it,   p̂ = min(p_ij, P),   f = ⌊p̂⌋, c = ⌈p̂⌉, w = p̂ − f
//   z_ij = s_ij + (1 − w)·a_i[f] + w·a_i[c],   a_i[k] = q_i·e[k]   (k = 0 … P)
//
// and the softmax runs over z (the paper's listing: the gates read the scaled, causally masked
// logits; the position term q·e is not scaled). e is blocks.{l}.cope.e [P + 1][d_model], head h's
// vectors in its columns [h·head_dim, (h + 1)·head_dim) as q's; P = train_len. The table starts at
// 0 (as the paper's code). Position ids are not used: p̂ comes from the content.
//
// Backward, from D_ij = ∂L/∂z_ij: ∂L/∂a_i[f] += (1 − w) D_ij, ∂L/∂a_i[c] += w D_ij;
// ∂L/∂p_ij = D_ij (a_i[c] − a_i[f]) where p_ij ≤ P (0 where clamped); ∂L/∂g_it = Σ_{j ≤ t} ∂L/∂p_ij
// (p_ij holds g_it for every j ≤ t); ∂L/∂s_ij = D_ij + ∂L/∂g_ij · g_ij (1 − g_ij). Then
// ∂L/∂e_h[k] = Σ_i ∂L/∂a_i[k] q_i and ∂L/∂q_i += Σ_k ∂L/∂a_i[k] e_h[k].
//
// Per layer the forward keeps g and p [batch][n_heads][seq_len][seq_len] and a
// [batch][n_heads][seq_len][P + 1] (LayerCache); the backward's ∂L/∂a is [seq_len][P + 1] scratch.
#include <algorithm>
#include <cmath>

#include "lab/kernels/lab_table.hpp"
#include "lab/model.hpp"

namespace posenc::lab::detail {
namespace {

// Where p̂ = min(p, P) falls between the table's rows.
struct Between {
  std::size_t f, c;
  float w;
  bool clamped;
};
Between between(float p, std::size_t P) {
  const bool clamped = p > static_cast<float>(P);
  const float q = clamped ? static_cast<float>(P) : p;
  const auto f = static_cast<std::size_t>(std::floor(q));
  const float w = q - static_cast<float>(f);
  return {f, w > 0.0f ? f + 1 : f, w, clamped};
}

struct Head {
  float *g, *p, *a;
  const float *q, *e;
};
Head head(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h) {
  const std::size_t T = m.ws.seq_len, H = m.config.n_heads, P = m.config.train_len;
  LayerCache& lc = m.ws.layers[l];
  const std::size_t at = (b * H + h) * T;
  return {lc.cope_g.data() + at * T, lc.cope_p.data() + at * T, lc.cope_a.data() + at * (P + 1),
          lc.q.data() + b * T * m.config.d_model + h * m.head_dim, m.param(m.blocks[l].cope_e) + h * m.head_dim};
}

}  // namespace

void cope_forward_head(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h) {
  const auto& K = kernels::lab_kernel_table();
  const std::size_t T = m.ws.seq_len, d = m.config.d_model, P = m.config.train_len;
  const Head x = head(m, l, b, h);
  K.gemm_nt(x.a, P + 1, x.q, d, x.e, d, T, P + 1, m.head_dim, false);  // a[i][k] = q_i·e[k]
}

void cope_forward_row(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, std::size_t i, float* s) {
  const std::size_t T = m.ws.seq_len, P = m.config.train_len;
  const Head x = head(m, l, b, h);
  float *g = x.g + i * T, *p = x.p + i * T;
  const float* a = x.a + i * (P + 1);
  float count = 0.0f;
  for (std::size_t j = i + 1; j-- > 0;) {  // from the query back: p_ij = p_i(j+1) + g_ij
    g[j] = 1.0f / (1.0f + std::exp(-s[j]));
    count += g[j];
    p[j] = count;
    const Between at = between(count, P);
    s[j] += (1.0f - at.w) * a[at.f] + at.w * a[at.c];
  }
}

void cope_backward_row(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, std::size_t i, float* ds,
                       float* da) {
  const std::size_t T = m.ws.seq_len, P = m.config.train_len;
  const Head x = head(m, l, b, h);
  const float *g = x.g + i * T, *p = x.p + i * T, *a = x.a + i * (P + 1);
  float* dai = da + i * (P + 1);
  std::fill(dai, dai + P + 1, 0.0f);
  double d_gate = 0.0;  // ∂L/∂g_ij = Σ_{j' ≤ j} ∂L/∂p_ij'
  for (std::size_t j = 0; j <= i; ++j) {
    const float D = ds[j];
    const Between at = between(p[j], P);
    dai[at.f] += (1.0f - at.w) * D;
    dai[at.c] += at.w * D;
    if (!at.clamped) d_gate += static_cast<double>(D) * (a[at.c] - a[at.f]);
    ds[j] = D + static_cast<float>(d_gate) * g[j] * (1.0f - g[j]);
  }
}

void cope_backward_head(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, const float* da, float* dq) {
  const auto& K = kernels::lab_kernel_table();
  const std::size_t T = m.ws.seq_len, d = m.config.d_model, P = m.config.train_len, hd = m.head_dim;
  const Head x = head(m, l, b, h);
  K.gemm(m.grad(m.blocks[l].cope_e) + h * hd, d, da, 1, P + 1, x.q, d, P + 1, hd, T, true);  // ∂e_h += ∂aᵀ·q
  K.gemm(dq, d, da, P + 1, 1, x.e, d, T, hd, P + 1, true);                                   // ∂q += ∂a·e_h
}

}  // namespace posenc::lab::detail
