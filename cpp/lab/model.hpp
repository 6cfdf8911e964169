// The lab model's internals, shared by model.cpp (parameters, checks, the public calls),
// forward.cpp (forward and backward passes), optimizer.cpp (AdamW) and the lab's own schemes'
// files (xpos.cpp, kerple.cpp, fire.cpp, cope.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/lab.hpp"

namespace posenc::lab {

namespace detail {

constexpr float kLayerNormEps = 1e-5f;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
// T5: causal buckets of relative position j - i (decoder self-attention), shared by all layers.
constexpr int kT5Buckets = 32;
constexpr int kT5MaxDistance = 128;

inline bool is_kerple(Scheme s) { return s == Scheme::kKerpleLog || s == Scheme::kKerplePower; }
// The schemes that rotate q and k by RoPE's tables (ws.cos, ws.sin; xPos's keys by ws.cos_k, ws.sin_k).
inline bool rotates(Scheme s) { return s == Scheme::kRope || s == Scheme::kXpos || s == Scheme::kPRope; }
// p-RoPE's p, the fraction of rope's frequencies kept (Barbero et al. 2024, "Round and Round We Go!
// What makes Rotary Positional Encodings useful?": 0.75-RoPE, their best Gemma 2B perplexity).
constexpr double kPRopeFraction = 0.75;
constexpr std::size_t kFireWidth = 32;  // FIRE's hidden units (Li et al. 2023: 1 → 32 → n_heads)

// The mixed-layer schemes (lab.hpp: irope, nope_interval, gemma3, swa_rope_nope): one layer's
// position handling, from the scheme, the layer and the model's size (layer_plan, model.cpp).
inline bool mixes(Scheme s) { return s >= Scheme::kIrope && s <= Scheme::kSwaRopeNope; }
constexpr double kLocalTheta = 10000.0;     // every local RoPE layer's θ (Gemma 3's rope_local_base_freq)
constexpr double kGemma3GlobalTheta = 1e6;  // Gemma 3's rope_theta (google/gemma-3-4b-it, config.json)
constexpr double kIropeAttnScale = 0.1;     // Llama 4's attn_scale (meta-llama/Llama-4-Scout-17B-16E)
struct LayerPlan {
  double theta = 0.0;        // RoPE's base; 0: NoPE
  std::size_t window = 0;    // the keys a query sees, its own included; 0: every earlier key
  double floor_scale = 0.0;  // > 0: the queries × irope_attention_scale(pos, floor_scale, kIropeAttnScale)
};
LayerPlan layer_plan(const ModelConfig& c, std::size_t l);

struct Tensor {
  std::string name;
  std::size_t rank, rows, cols;
  std::size_t offset;  // into params / grads / adam moments
  bool decay;          // AdamW weight decay (the blocks' matrices)
};

struct Block {  // tensor indices
  std::size_t ln1_w, ln1_b, wq, wk, wv, wo, ln2_w, ln2_b, w1, w2;
  std::size_t fire_w1 = kNone, fire_b1 = kNone, fire_w2 = kNone, fire_c = kNone, fire_L = kNone;
  std::size_t cope_e = kNone;
};

// Activations of one layer for a batch [batch · seq_len] rows, kept for the backward pass.
struct LayerCache {
  std::vector<float> a, mu1, r1;              // LN1(x), its mean and 1/std per row
  std::vector<float> q, k, v;                 // [rows][d_model]; q and k after RoPE
  std::vector<float> p;                       // attention probabilities [batch][n_heads][seq_len][seq_len]
  std::vector<float> ctx, h;                  // heads concatenated; h = x + ctx·wo
  std::vector<float> b, mu2, r2;              // LN2(h)
  std::vector<float> u, g;                    // [rows][4 d_model]: h·w1 and GELU of it
  std::vector<float> cope_g, cope_p, cope_a;  // cope: gates, positions, q·e (cope.cpp)
};

// One pool worker's scratch for the backward pass's attention tasks (forward.cpp; sized by
// prepare() for pool_workers() workers, before any task runs).
struct WorkerScratch {
  std::vector<float> dp, ds;   // ∂L/∂P and ∂L/∂S of one (batch row, head) [seq_len][seq_len]
  std::vector<float> cope_da;  // cope: ∂L/∂(q·e) of one (batch row, head) [seq_len][train_len + 1]
};

struct Workspace {
  std::size_t batch = 0, seq_len = 0;
  // Positions of the batch's tokens [rows]; shared: 0 … seq_len − 1 in every row, so the tables and
  // biases below are one for all rows, else one per row b (groups = batch). span = max position + 1.
  std::vector<std::size_t> pos;
  bool shared = true;
  std::size_t span = 0, groups = 1;
  std::vector<float> x;  // the residual stream [(n_layers + 1)][rows][d_model]
  std::vector<LayerCache> layers;
  std::vector<float> f, muf, rf;  // ln_f
  std::vector<float> logits;      // [rows][vocab]: probabilities after forward, dlogits in backward
  std::vector<float> token_loss;  // [rows]: -log p(token[t+1]) (0 at t = seq_len - 1)
  std::vector<float> pos_table;   // sinusoidal [span][d_model]
  // rope and xpos, the queries' tables [groups][seq_len][head_dim / 2] (row t at position pos[t]); xpos:
  // the keys' tables (×ζ^(−pos/γ) where the queries' are ×ζ^(pos/γ))
  std::vector<float> cos, sin, cos_k, sin_k;
  std::vector<float> cos_g, sin_g;  // gemma3: its global layers' tables (θ 1e6), as cos and sin (θ 10000)
  std::vector<int> bucket;          // t5: bucket of distance pos_i − pos_j, [span]
  std::vector<float> kbias;         // kerple: the bias of distance pos_i − pos_j per head, [n_heads][span]
  std::vector<double> kgrad;        // kerple backward: Σ ∂L/∂bias per head and distance, [n_heads][span]
  std::vector<float> fbias;         // fire: [n_layers][groups][n_heads][seq_len][seq_len], j <= i (fire.cpp)
  std::vector<double> fgrad;        // fire backward, one layer: Σ ∂L/∂score [groups][n_heads][seq_len][seq_len]
  std::vector<double> fpair;        // fire backward, one chunk of pairs: x, ∂x/∂c, ∂x/∂L [pairs][3] (fire.cpp)
  std::vector<double> fback;        // and each pair's Σ_h G·w2 per hidden unit [pairs][32]
  // backward scratch
  std::vector<float> dx, dh, da, dn, df, dq, dk, dv, dctx, dg, du;
  std::vector<WorkerScratch> workers;  // one per pool worker
};

}  // namespace detail

struct Model::Impl {
  ModelConfig config;
  std::size_t head_dim = 0;
  std::vector<detail::Tensor> tensors;
  std::uint64_t n_floats = 0;  // of every tensor, counted in 64 bits (also in 32-bit WebAssembly)
  std::vector<float> params, grads, adam_m, adam_v;
  std::size_t tok_emb = detail::kNone, pos_emb = detail::kNone, t5_bias = detail::kNone;
  std::size_t kerple_r1 = detail::kNone, kerple_r2 = detail::kNone;
  std::size_t ln_f_w = detail::kNone, ln_f_b = detail::kNone;
  std::vector<detail::Block> blocks;
  std::vector<float> slopes;  // alibi [n_heads]
  std::size_t steps = 0;
  std::size_t max_positions = 0;  // config.max_positions, or train_len for 0
  detail::Workspace ws;

  float* param(std::size_t t) { return params.data() + tensors[t].offset; }
  const float* param(std::size_t t) const { return params.data() + tensors[t].offset; }
  float* grad(std::size_t t) { return grads.data() + tensors[t].offset; }
};

namespace detail {

// shape_check's rule of the rows' count: batch > 0, batch · seq_len <= kMaxTokens (seq_len >= 1);
// random_positions_check's too (the positions of a call's tokens).
Status check_rows(std::size_t batch, std::size_t seq_len) noexcept;
// Checks tokens[batch][seq_len] against the model (ids, sizes, learned length).
Status check_tokens(const Model::Impl& m, const std::int32_t* tokens, std::size_t batch, std::size_t seq_len) noexcept;
// Positions [batch][seq_len] (may be null) against the model: each row strictly increasing, in
// [0, max_positions).
Status check_positions(const Model::Impl& m, const std::int32_t* positions, std::size_t batch,
                       std::size_t seq_len) noexcept;
// Sizes the workspace for [batch][seq_len] at checked positions (null: 0 … seq_len − 1) and fills
// the position tables (RoPE with scaling) and the learned biases (KERPLE, FIRE) from the current
// parameters: call it after they change. May throw std::bad_alloc (callers catch).
struct RopeChoice {
  RopeScaling scaling = RopeScaling::kNone;
  double factor = 0.0;  // 0: max(1, seq_len / train_len)
};
// A scaling and factor as EvalOptions / StepOptions allow them for the model's scheme.
Status check_rope_choice(const Model::Impl& m, RopeScaling scaling, double factor) noexcept;
Status prepare(Model::Impl& m, std::size_t batch, std::size_t seq_len, const RopeChoice& rope,
               const std::int32_t* positions = nullptr);
// The floats prepare() allocates at most for a call on [batch][seq_len] at positions below span.
std::uint64_t activation_floats(const ModelConfig& c, std::uint64_t batch, std::uint64_t seq_len, std::uint64_t span);
// The forward pass over checked tokens; fills ws (token_loss, probabilities, caches).
void forward(Model::Impl& m, const std::int32_t* tokens);
// The backward pass of the mean loss after forward(); writes every gradient.
void backward(Model::Impl& m, const std::int32_t* tokens);
// The mean of ws.token_loss over the targets (double accumulation).
double mean_loss(const Model::Impl& m);
// The positivity maps of the learned-bias schemes; softplus is x itself above 20.
inline double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// KERPLE's r1, r2 of head h from its raw parameters (lab.hpp: softplus, and for the power
// variant's r2 2·sigmoid), with their derivatives by the raw values.
struct KerpleHead {
  double r1, r2, dr1, dr2;
};
inline KerpleHead kerple_head(const Model::Impl& m, std::size_t h) {
  const double a = m.param(m.kerple_r1)[h], b = m.param(m.kerple_r2)[h];
  if (m.config.scheme == Scheme::kKerplePower)
    return {softplus(a), 2.0 * sigmoid(b), sigmoid(a), 2.0 * sigmoid(b) * (1.0 - sigmoid(b))};
  return {softplus(a), softplus(b), sigmoid(a), sigmoid(b)};
}

// KERPLE (kerple.cpp): the bias table ws.kbias [n_heads][span] from the current parameters (and
// ws.kgrad zeroed); after the backward pass summed ws.kgrad, the gradients of kerple_r1, kerple_r2.
void kerple_bias(Model::Impl& m);
void kerple_backward(Model::Impl& m);

// xPos (xpos.cpp): RoPE's tables ws.cos, ws.sin [span][head_dim / 2] scaled into the queries' and
// copied into the keys' (ws.cos_k, ws.sin_k).
void xpos_tables(Workspace& ws, std::size_t span, std::size_t head_dim);

// FIRE (fire.cpp): layer l's bias into ws.fbias from the current parameters; layer l's gradients
// from ws.fgrad; its function f sampled at x = k / (n_points − 1) into out[n_points][n_heads];
// its c and L.
void fire_bias(Model::Impl& m, std::size_t l);
void fire_backward(Model::Impl& m, std::size_t l);
void fire_function(const Model::Impl& m, std::size_t l, std::size_t n_points, float* out);
// The pairs fire_backward takes at a time on [batch][seq_len] (its scratch ws.fpair, ws.fback).
std::size_t fire_chunk_pairs(std::size_t seq_len);
double fire_c(const Model::Impl& m, std::size_t l);
double fire_L(const Model::Impl& m, std::size_t l);

// CoPE (cope.cpp), for layer l, batch row b, head h: q·e into the layer's cache (before the rows);
// row i's position term added to its scaled scores s[0 … i] (before the softmax); row i's backward
// from ∂L/∂z in ds[0 … i] to ∂L/∂s, ∂L/∂(q·e) into da [seq_len][train_len + 1]; then e's gradient
// and ∂L/∂q += da·e into dq (the head's [seq_len] rows of stride d_model), after dQ = dS·K.
void cope_forward_head(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h);
void cope_forward_row(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, std::size_t i, float* s);
void cope_backward_row(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, std::size_t i, float* ds,
                       float* da);
void cope_backward_head(Model::Impl& m, std::size_t l, std::size_t b, std::size_t h, const float* da, float* dq);

}  // namespace detail
}  // namespace posenc::lab
