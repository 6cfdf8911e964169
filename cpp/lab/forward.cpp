// The lab model's forward and backward passes, written out by hand (no autograd). Rows r of the
// batch are b · seq_len + t. Matrix products, softmax, LayerNorm, GELU and the RoPE rotation run in
// the SIMD kernels (kernels/lab_*.cpp); the scheme-specific terms come from posenc's own code:
// sinusoidal(), rope_frequencies() + rope_cache(), alibi_slopes(), t5_bucket(); the lab's own
// schemes' from their files: xpos.cpp, kerple.cpp, fire.cpp, cope.cpp.
//
// Threads (parallel.hpp): the matrix products split by rows of their output, the row-wise kernels
// by rows, attention by (batch row, head) — in the backward pass by head when the scheme sums a
// bias gradient over the batch rows (T5, KERPLE, FIRE: the b loop stays inside the task, in order).
// Each value is computed by one thread in the single-threaded order: the same bits on any count.
#include <algorithm>
#include <cmath>

#include "lab/kernels/lab_table.hpp"
#include "lab/model.hpp"
#include "lab/parallel.hpp"
#include "posenc/attention.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/t5.hpp"

namespace posenc::lab::detail {
namespace {

// Row t of each group's rope tables from the position tables at pos[t] (a copy: the kernels take
// one row per token).
void gather(std::vector<float>& table, const std::vector<std::size_t>& pos, std::size_t width) {
  std::vector<float> rows(pos.size() * width);
  for (std::size_t r = 0; r < pos.size(); ++r)
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(pos[r] * width), width,
                rows.begin() + static_cast<std::ptrdiff_t>(r * width));
  table = std::move(rows);
}

// The mixed-layer schemes' RoPE tables at θ, unscaled, as rope's: [span][head_dim / 2] from posenc's
// rope_frequencies + rope_cache, then row t at pos[t] when the positions are given.
Status plain_rope_tables(const Workspace& ws, double theta, std::size_t seq_len, std::size_t hd,
                         std::vector<float>& cos, std::vector<float>& sin) {
  const std::size_t half = hd / 2;
  RopeParams p;
  p.head_dim = hd;
  p.theta = theta;
  std::vector<double> inv_freq(half);
  double attention_factor = 1.0;
  if (Status s = rope_frequencies(p, seq_len, inv_freq.data(), half, &attention_factor); !s.ok()) return s;
  cos.resize(ws.span * half);
  sin.resize(ws.span * half);
  RopeApplyOptions o;
  o.precision = Precision::kAccurate;
  o.attention_factor = attention_factor;
  if (Status s = rope_cache(cos.data(), sin.data(), ws.span, inv_freq.data(), hd, nullptr, 0.0, o); !s.ok()) return s;
  if (!ws.shared) {
    gather(cos, ws.pos, half);
    gather(sin, ws.pos, half);
  }
  return Status::Ok();
}

}  // namespace

// Every activation buffer of a call on [batch][seq_len] in `groups` position groups (1, or batch at
// given positions) and its length: prepare() sizes them, footprint() adds them up.
// Size: std::size_t, or std::uint64_t for footprint() (32-bit WebAssembly must not wrap).
template <class Size, class Visit>
void each_buffer(Workspace& ws, const ModelConfig& c, Size batch, Size seq_len, Size groups, std::size_t workers,
                 Visit&& visit) {
  const Size d = c.d_model, rows = batch * seq_len, f = 4 * d, tt = seq_len * seq_len, H = c.n_heads, P = c.train_len;
  const bool cope = c.scheme == Scheme::kCope, fire = c.scheme == Scheme::kFire;
  visit(ws.x, (c.n_layers + 1) * rows * d);
  ws.layers.resize(c.n_layers);
  for (LayerCache& l : ws.layers) {
    for (auto* v : {&l.a, &l.q, &l.k, &l.v, &l.ctx, &l.h, &l.b}) visit(*v, rows * d);
    for (auto* v : {&l.mu1, &l.r1, &l.mu2, &l.r2}) visit(*v, rows);
    visit(l.p, batch * H * tt);
    visit(l.u, rows * f);
    visit(l.g, rows * f);
    visit(l.cope_g, cope ? batch * H * tt : 0);
    visit(l.cope_p, cope ? batch * H * tt : 0);
    visit(l.cope_a, cope ? batch * H * seq_len * (P + 1) : 0);
  }
  visit(ws.fbias, fire ? c.n_layers * groups * H * tt : 0);
  visit(ws.fgrad, fire ? groups * H * tt : 0);
  const Size chunk = fire ? fire_chunk_pairs(static_cast<std::size_t>(seq_len)) : 0;
  visit(ws.fpair, 3 * chunk);
  visit(ws.fback, kFireWidth * chunk);
  visit(ws.f, rows * d);
  visit(ws.muf, rows);
  visit(ws.rf, rows);
  visit(ws.logits, rows * c.vocab_size);
  visit(ws.token_loss, rows);
  for (auto* v : {&ws.dx, &ws.dh, &ws.da, &ws.dn, &ws.df, &ws.dq, &ws.dk, &ws.dv, &ws.dctx}) visit(*v, rows * d);
  visit(ws.dg, rows * f);
  visit(ws.du, rows * f);
  ws.workers.resize(workers);  // the backward pass's attention scratch, one per pool worker
  for (WorkerScratch& w : ws.workers) {
    visit(w.dp, tt);
    visit(w.ds, tt);
    visit(w.cope_da, cope ? seq_len * (P + 1) : 0);
  }
}

std::uint64_t activation_floats(const ModelConfig& c, std::uint64_t batch, std::uint64_t seq_len, std::uint64_t span) {
  Workspace ws;
  std::uint64_t n = 0;
  each_buffer(ws, c, batch, seq_len, batch, std::max<std::size_t>(pool::pool_workers(), 1),
              [&](const auto& v, std::uint64_t k) { n += k * sizeof(v[0]) / sizeof(float); });
  // prepare()'s position tables: at most span rows, and the rows gathered at given positions.
  const std::uint64_t half = c.d_model / c.n_heads / 2;
  switch (c.scheme) {
    case Scheme::kSinusoidal: return n + span * std::uint64_t{c.d_model};
    case Scheme::kRope:
    case Scheme::kPRope: return n + 2 * (span + batch * seq_len) * half;
    case Scheme::kXpos:
    case Scheme::kGemma3: return n + 4 * (span + batch * seq_len) * half;
    case Scheme::kIrope:
    case Scheme::kNopeInterval:
    case Scheme::kSwaRopeNope: return n + 2 * (span + batch * seq_len) * half;
    case Scheme::kT5: return n + span;
    case Scheme::kKerpleLog:
    case Scheme::kKerplePower:
      return n + 3 * std::uint64_t{c.n_heads} * span;  // the float bias and its double gradient
    default: return n;
  }
}

Status prepare(Model::Impl& m, std::size_t batch, std::size_t seq_len, const RopeChoice& rope,
               const std::int32_t* positions) {
  const ModelConfig& c = m.config;
  const std::size_t d = c.d_model, hd = m.head_dim;
  Workspace& ws = m.ws;
  ws.batch = batch;
  ws.seq_len = seq_len;
  ws.groups = positions == nullptr ? 1 : batch;
  each_buffer(ws, c, batch, seq_len, ws.groups, std::max<std::size_t>(pool::pool_workers(), 1),
              [](auto& v, std::size_t n) {
                if (v.size() != n) v.assign(n, 0);
              });
  ws.shared = positions == nullptr;
  ws.pos.resize(ws.groups * seq_len);
  for (std::size_t r = 0; r < ws.pos.size(); ++r) ws.pos[r] = ws.shared ? r : static_cast<std::size_t>(positions[r]);
  ws.span = 0;
  for (std::size_t p : ws.pos) ws.span = std::max(ws.span, p + 1);
  const std::size_t span = ws.span;
  switch (c.scheme) {
    case Scheme::kSinusoidal:
      ws.pos_table.resize(span * d);
      return sinusoidal(ws.pos_table.data(), span, d, SinusoidalParams{});
    case Scheme::kRope:
    case Scheme::kXpos:
    case Scheme::kPRope: {
      // The rotation's tables at the scaling; xPos then scales them: ζ_k^(pos/γ) on the queries',
      // ζ_k^(−pos/γ) on the keys'. p-RoPE's are rope's from posenc's proportional frequencies: the
      // first ⌊p·head_dim/2⌋ of rope's, then 0 (those pairs' tables are cos 1, sin 0).
      const std::size_t half = hd / 2;
      RopeParams p;
      p.head_dim = hd;
      p.theta = 10000.0;
      p.scaling = rope.scaling;
      if (c.scheme == Scheme::kPRope) {  // no inference-time scaling reaches it (check_rope_choice)
        p.scaling = RopeScaling::kProportional;
        p.partial_rotary_factor = kPRopeFraction;
      }
      const double factor = rope.factor > 0.0
                                ? rope.factor
                                : std::max(1.0, static_cast<double>(seq_len) / static_cast<double>(c.train_len));
      if (rope.scaling == RopeScaling::kDynamic) {
        p.factor = rope.factor > 0.0 ? rope.factor : 2.0;
        p.max_position_embeddings = c.train_len;
      } else if (rope.scaling != RopeScaling::kNone) {
        p.factor = factor;
        p.original_max_position_embeddings = c.train_len;
      }
      std::vector<double> inv_freq(half);
      double attention_factor = 1.0;
      if (Status s = rope_frequencies(p, seq_len, inv_freq.data(), half, &attention_factor); !s.ok()) return s;
      ws.cos.resize(span * half);
      ws.sin.resize(span * half);
      RopeApplyOptions o;
      o.precision = Precision::kAccurate;
      o.attention_factor = attention_factor;
      if (Status s = rope_cache(ws.cos.data(), ws.sin.data(), span, inv_freq.data(), hd, nullptr, 0.0, o); !s.ok())
        return s;
      if (c.scheme == Scheme::kXpos) xpos_tables(ws, span, hd);
      if (!ws.shared)
        for (auto* table : {&ws.cos, &ws.sin, &ws.cos_k, &ws.sin_k})
          if (!table->empty()) gather(*table, ws.pos, half);
      return Status::Ok();
    }
    case Scheme::kIrope:
    case Scheme::kNopeInterval:
    case Scheme::kSwaRopeNope:  // the local layers' θ 10000 (no scaling reaches them: check_rope_choice)
      return plain_rope_tables(ws, kLocalTheta, seq_len, hd, ws.cos, ws.sin);
    case Scheme::kGemma3:  // and the global layers' θ 1e6
      if (Status s = plain_rope_tables(ws, kLocalTheta, seq_len, hd, ws.cos, ws.sin); !s.ok()) return s;
      return plain_rope_tables(ws, kGemma3GlobalTheta, seq_len, hd, ws.cos_g, ws.sin_g);
    case Scheme::kFire:  // every layer's bias from the current parameters, once for all rows
      for (std::size_t l = 0; l < c.n_layers; ++l) fire_bias(m, l);
      return Status::Ok();
    case Scheme::kKerpleLog:
    case Scheme::kKerplePower:  // the bias of each head and distance from the current parameters
      kerple_bias(m);
      return Status::Ok();
    case Scheme::kT5: {
      ws.bucket.resize(span);
      const T5BucketParams p{false, kT5Buckets, kT5MaxDistance};
      for (std::size_t dist = 0; dist < span; ++dist) ws.bucket[dist] = t5_bucket(-static_cast<std::int64_t>(dist), p);
      return Status::Ok();
    }
    default: return Status::Ok();
  }
}

namespace {

// A call's sizes: B rows of T tokens (rows = B · T), width d, H heads of hd, vocabulary V, MLP width F.
struct Sizes {
  std::size_t B, T, d, H, hd, V, rows, F;
  float scale;  // 1 / √hd
};
Sizes sizes(const Model::Impl& m) {
  const ModelConfig& c = m.config;
  const std::size_t B = m.ws.batch, T = m.ws.seq_len;
  return {B,
          T,
          c.d_model,
          c.n_heads,
          m.head_dim,
          c.vocab_size,
          B * T,
          4 * c.d_model,
          1.0f / std::sqrt(static_cast<float>(m.head_dim))};
}

// The bias of every scheme that adds one to the score of key j at distance dist from query i
// (ALiBi, T5, KERPLE, FIRE); 0 for the others.
float score_bias(const Model::Impl& m, std::size_t h, std::size_t dist, const float* t5, const float* fire,
                 std::size_t i, std::size_t j) {
  const Workspace& ws = m.ws;
  const std::size_t H = m.config.n_heads, T = ws.seq_len;
  if (m.config.scheme == Scheme::kAlibi) return -m.slopes[h] * static_cast<float>(dist);
  if (t5) return t5[static_cast<std::size_t>(ws.bucket[dist]) * H + h];
  if (is_kerple(m.config.scheme)) return ws.kbias[h * ws.span + dist];
  if (fire) return fire[(h * T + i) * T + j];
  return 0.0f;
}

// Layer l's rotation tables, the queries' and the keys' (xPos's differ; the mixed-layer schemes' by
// the layer's θ), or null where the layer has none.
struct Rotation {
  const float *qc = nullptr, *qs = nullptr, *kc = nullptr, *ks = nullptr;
};
Rotation rotation(const Model::Impl& m, std::size_t l) {
  const Workspace& ws = m.ws;
  const Scheme s = m.config.scheme;
  if (s == Scheme::kXpos) return {ws.cos.data(), ws.sin.data(), ws.cos_k.data(), ws.sin_k.data()};
  if (rotates(s)) return {ws.cos.data(), ws.sin.data(), ws.cos.data(), ws.sin.data()};
  const LayerPlan p = layer_plan(m.config, l);
  if (p.theta == 0.0) return {};
  const bool global = p.theta == kGemma3GlobalTheta;
  const float* c = global ? ws.cos_g.data() : ws.cos.data();
  const float* sn = global ? ws.sin_g.data() : ws.sin.data();
  return {c, sn, c, sn};
}

// q and k (or ∂L/∂q and ∂L/∂k with inverse: Rᵀ, and for xPos (ζR)ᵀ = ζRᵀ) rotated by r, a task per batch row.
void rotate(Model::Impl& m, const Rotation& r, float* q, float* k, bool inverse) {
  const auto& K = kernels::lab_kernel_table();
  const Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t T = z.T, d = z.d, H = z.H, hd = z.hd;
  parallel_tasks(z.B, pool::pool_workers(), [&](std::size_t b, std::size_t) {
    const std::size_t g = ws.shared ? 0 : b * T * (hd / 2);
    K.rope(q + b * T * d, T, d, H, hd, r.qc + g, r.qs + g, inverse);
    K.rope(k + b * T * d, T, d, H, hd, r.kc + g, r.ks + g, inverse);
  });
}

// Llama 4's temperature on irope's NoPE layers: row r of q (or of ∂L/∂q) × irope_attention_scale(pos_r,
// floor_scale, 0.1), the scale from posenc's attention.hpp in double, rounded to float32.
void scale_queries(Model::Impl& m, double floor_scale, float* q) {
  const Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  for (std::size_t r = 0; r < z.rows; ++r) {
    const auto pos = static_cast<double>(ws.pos[ws.shared ? r % z.T : r]);
    const auto scale = static_cast<float>(irope_attention_scale(pos, floor_scale, kIropeAttnScale));
    for (std::size_t i = 0; i < z.d; ++i) q[r * z.d + i] *= scale;
  }
}

// The first key query i sees: i + 1 − window inside a sliding window, else 0.
inline std::size_t first_key(std::size_t i, std::size_t window) {
  return window != 0 && i >= window ? i + 1 - window : 0;
}

// Attention's products over the causal triangle, with the terms a masked entry would add left out.
// Row i of S = Q·Kᵀ (and of dP = dctx·Vᵀ) is needed at j ≤ i only: it is computed up to the next
// multiple of 4 (gemm_nt's column groups), two rows a call, the same dot products. P and dS are 0 above the diagonal,
// so in P·V and dS·K row i's terms p > i, and in Pᵀ·dctx and dSᵀ·Q row i's terms p < i, add an exact
// 0 to a sum that starts at +0: each 4-row tile stops at, or starts from, its own rows. Every
// element keeps its kernel, its tile and the order of its terms, so its bits.
void causal_nt(float* c, const float* a, const float* b, std::size_t T, std::size_t d, std::size_t hd) {
  const auto& K = kernels::lab_kernel_table();
  for (std::size_t i = 0; i < T; i += 2)  // rows i, i + 1: the same group of 4 (i is even)
    K.gemm_nt(c + i * T, T, a + i * d, d, b, d, std::min<std::size_t>(2, T - i), std::min(T, (i / 4 + 1) * 4), hd,
              false);
}
// c = L·b for a lower-triangular L [T][T] (row stride T); transposed: c = Lᵀ·b.
void causal_gemm(float* c, const float* l, const float* b, std::size_t T, std::size_t d, std::size_t hd,
                 bool transposed) {
  const auto& K = kernels::lab_kernel_table();
  for (std::size_t i0 = 0; i0 < T; i0 += 4) {
    const std::size_t rows = std::min<std::size_t>(4, T - i0);
    if (transposed) K.gemm(c + i0 * d, d, l + i0 * T + i0, 1, T, b + i0 * d, d, rows, hd, T - i0, false);
    else K.gemm(c + i0 * d, d, l + i0 * T, T, 1, b, d, rows, hd, std::min(T, i0 + 4), false);
  }
}

// x₀: token embedding and the absolute position term.
void embed(Model::Impl& m, const std::int32_t* tokens) {
  const ModelConfig& c = m.config;
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const float* emb = m.param(m.tok_emb);
  const float emb_scale = c.scheme == Scheme::kSinusoidal ? std::sqrt(static_cast<float>(z.d)) : 1.0f;
  for (std::size_t r = 0; r < z.rows; ++r) {
    const std::size_t t = ws.pos[ws.shared ? r % z.T : r];
    const float* e = emb + static_cast<std::size_t>(tokens[r]) * z.d;
    float* x = ws.x.data() + r * z.d;
    const float* pos = c.scheme == Scheme::kSinusoidal ? ws.pos_table.data() + t * z.d
                       : c.scheme == Scheme::kLearned  ? m.param(m.pos_emb) + t * z.d
                                                       : nullptr;
    for (std::size_t i = 0; i < z.d; ++i) x[i] = e[i] * emb_scale + (pos ? pos[i] : 0.0f);
  }
}

// Layer l's attention: a = LN1(x); q, k, v = a·wq, a·wk, a·wv (row by row: one task per block of
// rows); RoPE on q and k; then per (batch row, head) the scores, softmax and context.
void attention_forward(Model::Impl& m, std::size_t l) {
  const auto& K = kernels::lab_kernel_table();
  const ModelConfig& c = m.config;
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t T = z.T, d = z.d, H = z.H, hd = z.hd;
  const Block& bl = m.blocks[l];
  LayerCache& lc = ws.layers[l];
  const float* x = ws.x.data() + l * z.rows * d;
  parallel_blocks(z.rows, 4, 3 * d * d, [&](std::size_t r0, std::size_t r1) {
    float* a = lc.a.data() + r0 * d;
    K.layernorm(a, lc.mu1.data() + r0, lc.r1.data() + r0, x + r0 * d, m.param(bl.ln1_w), m.param(bl.ln1_b), r1 - r0, d,
                kLayerNormEps);
    K.gemm(lc.q.data() + r0 * d, d, a, d, 1, m.param(bl.wq), d, r1 - r0, d, d, false);
    K.gemm(lc.k.data() + r0 * d, d, a, d, 1, m.param(bl.wk), d, r1 - r0, d, d, false);
    K.gemm(lc.v.data() + r0 * d, d, a, d, 1, m.param(bl.wv), d, r1 - r0, d, d, false);
  });
  const Rotation rot = rotation(m, l);
  if (rot.qc != nullptr) rotate(m, rot, lc.q.data(), lc.k.data(), false);
  const LayerPlan plan = layer_plan(c, l);
  if (plan.floor_scale > 0.0) scale_queries(m, plan.floor_scale, lc.q.data());
  const float* t5 = c.scheme == Scheme::kT5 ? m.param(m.t5_bias) : nullptr;
  const bool cope = c.scheme == Scheme::kCope;
  // One (batch row b, head h): its scores, softmax and context; a task each.
  const auto attend = [&](std::size_t b, std::size_t h) {
    const std::size_t* pos = ws.pos.data() + (ws.shared ? 0 : b * T);
    const float* fire =
        c.scheme == Scheme::kFire ? ws.fbias.data() + (l * ws.groups + (ws.shared ? 0 : b)) * H * T * T : nullptr;
    float* p = lc.p.data() + (b * H + h) * T * T;
    const std::size_t off = b * T * d + h * hd;
    // s[i][j] = scale q_i·k_j + bias(i, j) for j <= i, then the causal softmax of each row.
    causal_nt(p, lc.q.data() + off, lc.k.data() + off, T, d, hd);
    if (cope) cope_forward_head(m, l, b, h);
    for (std::size_t i = 0; i < T; ++i) {
      float* row = p + i * T;
      const std::size_t j0 = first_key(i, plan.window);
      for (std::size_t j = j0; j <= i; ++j)
        row[j] = row[j] * z.scale + score_bias(m, h, pos[i] - pos[j], t5, fire, i, j);
      if (cope) cope_forward_row(m, l, b, h, i, row);
      K.softmax(row + j0, i + 1 - j0);
      std::fill(row, row + j0, 0.0f);
      std::fill(row + i + 1, row + T, 0.0f);
    }
    causal_gemm(lc.ctx.data() + off, p, lc.v.data() + off, T, d, hd, false);
  };
  parallel_tasks(z.B * H, pool::pool_workers(), [&](std::size_t task, std::size_t) { attend(task / H, task % H); });
}

// Layer l after attention: h = x + ctx·wo; x' = h + GELU(LN2(h)·w1)·w2 — row by row, GELU on its
// own (its blocks are of elements).
void mlp_forward(Model::Impl& m, std::size_t l) {
  const auto& K = kernels::lab_kernel_table();
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t d = z.d, F = z.F;
  const Block& bl = m.blocks[l];
  LayerCache& lc = ws.layers[l];
  const float* x = ws.x.data() + l * z.rows * d;
  float* x_out = ws.x.data() + (l + 1) * z.rows * d;
  parallel_blocks(z.rows, 4, d * d + d * F, [&](std::size_t r0, std::size_t r1) {
    float* h = lc.h.data() + r0 * d;
    std::copy(x + r0 * d, x + r1 * d, h);
    K.gemm(h, d, lc.ctx.data() + r0 * d, d, 1, m.param(bl.wo), d, r1 - r0, d, d, true);
    K.layernorm(lc.b.data() + r0 * d, lc.mu2.data() + r0, lc.r2.data() + r0, h, m.param(bl.ln2_w), m.param(bl.ln2_b),
                r1 - r0, d, kLayerNormEps);
    K.gemm(lc.u.data() + r0 * F, F, lc.b.data() + r0 * d, d, 1, m.param(bl.w1), F, r1 - r0, F, d, false);
  });
  gelu(lc.g.data(), lc.u.data(), z.rows * F);
  parallel_blocks(z.rows, 4, F * d, [&](std::size_t r0, std::size_t r1) {
    std::copy(lc.h.data() + r0 * d, lc.h.data() + r1 * d, x_out + r0 * d);
    K.gemm(x_out + r0 * d, d, lc.g.data() + r0 * F, F, 1, m.param(bl.w2), d, r1 - r0, d, F, true);
  });
}

// ln_f, tied logits = ln_f(x)·tok_embᵀ, softmax and -log p(token[t + 1]).
void head_forward(Model::Impl& m, const std::int32_t* tokens) {
  const auto& K = kernels::lab_kernel_table();
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t T = z.T, d = z.d, V = z.V;
  const float* emb = m.param(m.tok_emb);
  const float* x_last = ws.x.data() + m.config.n_layers * z.rows * d;
  parallel_blocks(z.rows, 4, d * V, [&](std::size_t r0, std::size_t r1) {
    float* f = ws.f.data() + r0 * d;
    K.layernorm(f, ws.muf.data() + r0, ws.rf.data() + r0, x_last + r0 * d, m.param(m.ln_f_w), m.param(m.ln_f_b),
                r1 - r0, d, kLayerNormEps);
    K.gemm_nt(ws.logits.data() + r0 * V, V, f, d, emb, d, r1 - r0, V, d, false);
    for (std::size_t r = r0; r < r1; ++r) {
      float* zr = ws.logits.data() + r * V;
      const bool has_target = r % T + 1 < T;
      const float z_target = has_target ? zr[tokens[r + 1]] : 0.0f;
      const float lse = K.softmax(zr, V);
      ws.token_loss[r] = has_target ? lse - z_target : 0.0f;
    }
  });
}

// dlogits = (p - onehot(target)) / n_targets (rows without a target contribute nothing); then
// df = dz·tok_emb, dtok_emb = dzᵀ·f and back through ln_f into dx.
void head_backward(Model::Impl& m, const std::int32_t* tokens) {
  const auto& K = kernels::lab_kernel_table();
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t T = z.T, d = z.d, V = z.V;
  const float inv_n = 1.0f / static_cast<float>(z.B * (T - 1));
  const float* emb = m.param(m.tok_emb);
  parallel_blocks(z.rows, 4, V * d, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      float* zr = ws.logits.data() + r * V;
      if (r % T + 1 < T) {
        zr[tokens[r + 1]] -= 1.0f;
        for (std::size_t v = 0; v < V; ++v) zr[v] *= inv_n;
      } else {
        std::fill(zr, zr + V, 0.0f);
      }
    }
    K.gemm(ws.df.data() + r0 * d, d, ws.logits.data() + r0 * V, V, 1, emb, d, r1 - r0, d, V, false);  // df = dz·tok_emb
  });
  gemm(m.grad(m.tok_emb), d, ws.logits.data(), 1, V, ws.f.data(), d, V, d, z.rows, false);  // dtok_emb = dzᵀ·f
  const float* x_last = ws.x.data() + m.config.n_layers * z.rows * d;
  std::fill(ws.dx.begin(), ws.dx.end(), 0.0f);
  K.layernorm_backward(ws.dx.data(), m.grad(m.ln_f_w), m.grad(m.ln_f_b), ws.df.data(), x_last, ws.muf.data(),
                       ws.rf.data(), m.param(m.ln_f_w), z.rows, d);
}

// Layer l's MLP and attention output, backwards: dx is ∂L/∂x'; leaves ∂L/∂h in dh and ∂L/∂ctx in
// dctx. dg = dx·w2ᵀ, dw2 = gᵀ·dx, du = dg GELU'(u), dw1 = bᵀ·du, dn = du·w1ᵀ. Each pair of
// independent products below is one hand-over: blocks of input rows and blocks of the weight
// gradient's rows.
void mlp_backward(Model::Impl& m, std::size_t l) {
  const auto& K = kernels::lab_kernel_table();
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t rows = z.rows, d = z.d, F = z.F;
  const Block& bl = m.blocks[l];
  LayerCache& lc = ws.layers[l];
  const Blocks by_row_f(rows, 4, F * d), by_row_d(rows, 4, d * d), by_f(F, 4, d * rows), by_d(d, 4, d * rows);
  parallel_blocks(
      by_row_f,
      [&](std::size_t r0, std::size_t r1) {
        K.gemm_nt(ws.dg.data() + r0 * F, F, ws.dx.data() + r0 * d, d, m.param(bl.w2), d, r1 - r0, F, d, false);
      },
      by_f,
      [&](std::size_t i0, std::size_t i1) {
        K.gemm(m.grad(bl.w2) + i0 * d, d, lc.g.data() + i0, 1, F, ws.dx.data(), d, i1 - i0, d, rows, false);
      });
  gelu_backward(ws.du.data(), ws.dg.data(), lc.u.data(), rows * F);
  parallel_blocks(
      by_d,
      [&](std::size_t i0, std::size_t i1) {
        K.gemm(m.grad(bl.w1) + i0 * F, F, lc.b.data() + i0, 1, d, ws.du.data(), F, i1 - i0, F, rows, false);
      },
      by_row_f,
      [&](std::size_t r0, std::size_t r1) {
        K.gemm_nt(ws.dn.data() + r0 * d, d, ws.du.data() + r0 * F, F, m.param(bl.w1), F, r1 - r0, d, F, false);
      });
  std::copy(ws.dx.begin(), ws.dx.end(), ws.dh.begin());
  K.layernorm_backward(ws.dh.data(), m.grad(bl.ln2_w), m.grad(bl.ln2_b), ws.dn.data(), lc.h.data(), lc.mu2.data(),
                       lc.r2.data(), m.param(bl.ln2_w), rows, d);

  // Attention output: h = x + ctx·wo.
  parallel_blocks(
      by_d,
      [&](std::size_t i0, std::size_t i1) {
        K.gemm(m.grad(bl.wo) + i0 * d, d, lc.ctx.data() + i0, 1, d, ws.dh.data(), d, i1 - i0, d, rows, false);
      },
      by_row_d,
      [&](std::size_t r0, std::size_t r1) {
        K.gemm_nt(ws.dctx.data() + r0 * d, d, ws.dh.data() + r0 * d, d, m.param(bl.wo), d, r1 - r0, d, d, false);
      });
}

// One (batch row b, head h) of layer l's attention, backwards, on worker scratch w: dP, dV, the
// softmax's dS (and the bias gradients: T5's table, KERPLE's and FIRE's sums, CoPE's), dQ and dK.
void attend_backward(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, WorkerScratch& w) {
  const auto& K = kernels::lab_kernel_table();
  const ModelConfig& c = m.config;
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t T = z.T, d = z.d, H = z.H, hd = z.hd;
  LayerCache& lc = ws.layers[l];
  float* d_t5 = c.scheme == Scheme::kT5 ? m.grad(m.t5_bias) : nullptr;
  double* d_fire = c.scheme == Scheme::kFire ? ws.fgrad.data() : nullptr;
  const bool kerple = is_kerple(c.scheme), cope = c.scheme == Scheme::kCope;
  const std::size_t* pos = ws.pos.data() + (ws.shared ? 0 : b * T);
  double* fire_g = d_fire ? d_fire + (ws.shared ? 0 : b) * H * T * T : nullptr;
  const float* p = lc.p.data() + (b * H + h) * T * T;
  const std::size_t off = b * T * d + h * hd;
  const float* dctx = ws.dctx.data() + off;
  causal_nt(w.dp.data(), dctx, lc.v.data() + off, T, d, hd);  // dP = dctx·Vᵀ
  causal_gemm(ws.dv.data() + off, p, dctx, T, d, hd, true);   // dV = Pᵀ·dctx
  const std::size_t window = layer_plan(c, l).window;
  for (std::size_t i = 0; i < T; ++i) {
    float* ds = w.ds.data() + i * T;
    const std::size_t j0 = first_key(i, window);
    K.softmax_backward(ds + j0, p + i * T + j0, w.dp.data() + i * T + j0, i + 1 - j0);
    std::fill(ds, ds + j0, 0.0f);
    std::fill(ds + i + 1, ds + T, 0.0f);
    if (cope) cope_backward_row(m, l, b, h, i, ds, w.cope_da.data());  // ∂L/∂z → ∂L/∂s
    for (std::size_t j = j0; j <= i; ++j) {
      const std::size_t dist = pos[i] - pos[j];
      if (d_t5) d_t5[static_cast<std::size_t>(ws.bucket[dist]) * H + h] += ds[j];  // ∂/∂bias = dS
      if (kerple) ws.kgrad[h * ws.span + dist] += ds[j];
      if (fire_g) fire_g[(h * T + i) * T + j] += ds[j];
      ds[j] *= z.scale;
    }
  }
  causal_gemm(ws.dq.data() + off, w.ds.data(), lc.k.data() + off, T, d, hd, false);  // dQ = dS·K
  causal_gemm(ws.dk.data() + off, w.ds.data(), lc.q.data() + off, T, d, hd, true);   // dK = dSᵀ·Q
  if (cope) cope_backward_head(m, l, b, h, w.cope_da.data(), ws.dq.data() + off);
}

// Layer l's attention, backwards from dctx (and dh, the residual): every (b, h), the scheme's
// learned bias, the rotation, then wq, wk, wv and LN1 into dx.
void attention_backward(Model::Impl& m, std::size_t l) {
  const auto& K = kernels::lab_kernel_table();
  const ModelConfig& c = m.config;
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const std::size_t B = z.B, d = z.d, H = z.H, rows = z.rows;
  const Block& bl = m.blocks[l];
  LayerCache& lc = ws.layers[l];
  const float* x = ws.x.data() + l * rows * d;
  const bool d_fire = c.scheme == Scheme::kFire;
  if (d_fire) std::fill(ws.fgrad.begin(), ws.fgrad.end(), 0.0);
  // Tasks: one per (b, h), or one per head h with b = 0 … B − 1 in order when a gradient is summed
  // over the batch rows (t5, kerple, fire at shared positions, cope's table: they add into the same
  // slots), so each sum keeps its order.
  const bool per_head =
      c.scheme == Scheme::kT5 || is_kerple(c.scheme) || (d_fire && ws.shared) || c.scheme == Scheme::kCope;
  parallel_tasks(per_head ? H : B * H, ws.workers.size(), [&](std::size_t task, std::size_t worker) {
    WorkerScratch& w = ws.workers[worker];
    if (per_head)
      for (std::size_t b = 0; b < B; ++b) attend_backward(m, l, b, task, w);
    else attend_backward(m, l, task / H, task % H, w);
  });
  if (d_fire) fire_backward(m, l);
  // Back through the temperature, then the rotation (forward: rotated, then scaled).
  if (const LayerPlan plan = layer_plan(c, l); plan.floor_scale > 0.0) scale_queries(m, plan.floor_scale, ws.dq.data());
  if (const Rotation rot = rotation(m, l); rot.qc != nullptr) rotate(m, rot, ws.dq.data(), ws.dk.data(), true);
  // dW = aᵀ·dY for wq, wk, wv by rows of dW, and da = dq·wqᵀ + dk·wkᵀ + dv·wvᵀ (in that order) by rows.
  const Blocks by_row_d(rows, 4, d * d), by_d(d, 4, d * rows);
  parallel_blocks(
      by_d,
      [&](std::size_t i0, std::size_t i1) {
        const float* a = lc.a.data() + i0;
        K.gemm(m.grad(bl.wq) + i0 * d, d, a, 1, d, ws.dq.data(), d, i1 - i0, d, rows, false);
        K.gemm(m.grad(bl.wk) + i0 * d, d, a, 1, d, ws.dk.data(), d, i1 - i0, d, rows, false);
        K.gemm(m.grad(bl.wv) + i0 * d, d, a, 1, d, ws.dv.data(), d, i1 - i0, d, rows, false);
      },
      by_row_d,
      [&](std::size_t r0, std::size_t r1) {
        float* da = ws.da.data() + r0 * d;
        K.gemm_nt(da, d, ws.dq.data() + r0 * d, d, m.param(bl.wq), d, r1 - r0, d, d, false);
        K.gemm_nt(da, d, ws.dk.data() + r0 * d, d, m.param(bl.wk), d, r1 - r0, d, d, true);
        K.gemm_nt(da, d, ws.dv.data() + r0 * d, d, m.param(bl.wv), d, r1 - r0, d, d, true);
      });
  std::copy(ws.dh.begin(), ws.dh.end(), ws.dx.begin());
  K.layernorm_backward(ws.dx.data(), m.grad(bl.ln1_w), m.grad(bl.ln1_b), ws.da.data(), x, lc.mu1.data(), lc.r1.data(),
                       m.param(bl.ln1_w), rows, d);
}

// Embeddings: x₀ = tok_emb[token]·s (+ pos_emb[pos]).
void embed_backward(Model::Impl& m, const std::int32_t* tokens) {
  const ModelConfig& c = m.config;
  Workspace& ws = m.ws;
  const Sizes z = sizes(m);
  const float emb_scale = c.scheme == Scheme::kSinusoidal ? std::sqrt(static_cast<float>(z.d)) : 1.0f;
  float* d_emb = m.grad(m.tok_emb);
  float* d_pos = c.scheme == Scheme::kLearned ? m.grad(m.pos_emb) : nullptr;
  for (std::size_t r = 0; r < z.rows; ++r) {
    const float* g = ws.dx.data() + r * z.d;
    float* e = d_emb + static_cast<std::size_t>(tokens[r]) * z.d;
    for (std::size_t i = 0; i < z.d; ++i) e[i] += g[i] * emb_scale;
    if (d_pos)
      for (std::size_t i = 0; i < z.d; ++i) d_pos[ws.pos[ws.shared ? r % z.T : r] * z.d + i] += g[i];
  }
}

}  // namespace

void forward(Model::Impl& m, const std::int32_t* tokens) {
  embed(m, tokens);
  for (std::size_t l = 0; l < m.config.n_layers; ++l) {
    attention_forward(m, l);
    mlp_forward(m, l);
  }
  head_forward(m, tokens);
}

void backward(Model::Impl& m, const std::int32_t* tokens) {
  std::fill(m.grads.begin(), m.grads.end(), 0.0f);
  const bool kerple = is_kerple(m.config.scheme);
  if (kerple) std::fill(m.ws.kgrad.begin(), m.ws.kgrad.end(), 0.0);
  head_backward(m, tokens);
  for (std::size_t l = m.config.n_layers; l-- > 0;) {
    mlp_backward(m, l);
    attention_backward(m, l);
  }
  if (kerple) kerple_backward(m);  // KERPLE's parameters, shared by the layers (kerple.cpp)
  embed_backward(m, tokens);
}

double mean_loss(const Model::Impl& m) {
  const std::size_t T = m.ws.seq_len, rows = m.ws.batch * T;
  double sum = 0.0;
  for (std::size_t r = 0; r < rows; ++r) sum += m.ws.token_loss[r];
  return sum / static_cast<double>(m.ws.batch * (T - 1));
}

}  // namespace posenc::lab::detail
