// Float64 scalar twins of the kernels: the straight formulas, written for clarity, never for speed.
// Each is `static inline`, a copy per test file: the suites compiled -O2 in Debug (CMakeLists.txt)
// then run their own optimised copy, where one shared inline function would be whichever copy the
// linker kept (an -O0 one made the KV cache's twin case 9× slower under ASan).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "posenc/posenc.hpp"

namespace posenc::reference {

// PE[pos][2i] = sin(pos / base^(2i/d_model)), PE[pos][2i+1] = cos(same), row-major.
static inline std::vector<double> sinusoidal(std::size_t seq_len, std::size_t d_model, double base) {
  std::vector<double> pe(seq_len * d_model);
  for (std::size_t pos = 0; pos < seq_len; ++pos)
    for (std::size_t j = 0; j < d_model; ++j) {
      const double angle =
          static_cast<double>(pos) / std::pow(base, static_cast<double>(2 * (j / 2)) / static_cast<double>(d_model));
      pe[pos * d_model + j] = (j % 2 == 0) ? std::sin(angle) : std::cos(angle);
    }
  return pe;
}

// tensor2tensor get_timing_signal_1d: [sin | cos] halves, ω_i = exp(-i ln(base) / max(h - 1, 1)),
// a zero column last when d_model is odd.
static inline std::vector<double> sinusoidal_concat(std::size_t seq_len, std::size_t d_model, double base) {
  std::vector<double> pe(seq_len * d_model, 0.0);
  const std::size_t h = d_model / 2;
  const double step = std::log(base) / std::fmax(static_cast<double>(h) - 1.0, 1.0);
  for (std::size_t pos = 0; pos < seq_len; ++pos)
    for (std::size_t i = 0; i < h; ++i) {
      const double angle = static_cast<double>(pos) * std::exp(-static_cast<double>(i) * step);
      pe[pos * d_model + i] = std::sin(angle);
      pe[pos * d_model + h + i] = std::cos(angle);
    }
  return pe;
}

}  // namespace posenc::reference

namespace posenc::reference {

// Rotates x[seq_len][n_heads][head_dim] in float64 by the given angles angle[t][k] (k < rot_dim/2).
// interleaved: pairs (2k, 2k+1); otherwise (k, k + rot_dim/2).
static inline std::vector<double> rope(const std::vector<float>& x, std::size_t seq_len, std::size_t n_heads,
                                       std::size_t head_dim, std::size_t rot_dim, const std::vector<double>& angle,
                                       bool interleaved, double scale = 1.0) {
  std::vector<double> y(x.begin(), x.end());
  const std::size_t half = rot_dim / 2;
  for (std::size_t t = 0; t < seq_len; ++t)
    for (std::size_t h = 0; h < n_heads; ++h)
      for (std::size_t k = 0; k < half; ++k) {
        const std::size_t base = (t * n_heads + h) * head_dim;
        const std::size_t i1 = base + (interleaved ? 2 * k : k);
        const std::size_t i2 = base + (interleaved ? 2 * k + 1 : k + half);
        const double c = std::cos(angle[t * half + k]) * scale, s = std::sin(angle[t * half + k]) * scale;
        const double a = x[i1], b = x[i2];
        y[i1] = a * c - b * s;
        y[i2] = b * c + a * s;
      }
  return y;
}

}  // namespace posenc::reference

namespace posenc::reference {

// Float64 twin of posenc::attention (tokens-major q/k/v, queries at the last q_len positions or at q_pos + i).
static inline std::vector<double> attention(const std::vector<float>& q, const std::vector<float>& k,
                                            const std::vector<float>& v, std::size_t q_len, std::size_t kv_len,
                                            const posenc::AttentionOptions& o, std::vector<double>* weights = nullptr) {
  const std::size_t H = o.n_heads, Hkv = o.n_kv_heads ? o.n_kv_heads : H, D = o.head_dim;
  const double scale = o.scale ? *o.scale : 1.0 / std::sqrt(double(D));
  std::vector<double> out(q_len * H * D, 0.0);
  if (weights) weights->assign(H * q_len * kv_len, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t kvh = h / (H / Hkv);
    for (std::size_t i = 0; i < q_len; ++i) {
      // may be negative: q_len > kv_len, or a negative q_pos
      const double qpos = (o.q_pos ? double(*o.q_pos) : double(kv_len) - double(q_len)) + double(i);
      std::vector<double> s(kv_len);
      double m = -INFINITY;
      for (std::size_t j = 0; j < kv_len; ++j) {
        double dot = 0;
        for (std::size_t d = 0; d < D; ++d) dot += double(q[(i * H + h) * D + d]) * k[(j * Hkv + kvh) * D + d];
        // Llama 4 temperature: q ·= log(floor((pos + 1) / floor_scale) + 1) · attn_scale + 1.
        if (o.temperature)
          dot *= std::log(std::floor((qpos + 1) / o.temperature->floor_scale) + 1) * o.temperature->attn_scale + 1;
        double x = dot * scale;
        if (o.softcap > 0) x = o.softcap * std::tanh(x / o.softcap);
        if (o.alibi_slopes) x -= o.alibi_slopes[h] * std::fabs(qpos - double(j));
        if (o.t5_table) x += o.t5_table[posenc::t5_bucket(std::int64_t(j) - std::int64_t(qpos), o.t5) * H + h];
        if (o.bias) x += o.bias[(o.bias_per_head ? h * q_len * kv_len : 0) + i * kv_len + j];
        if (o.causal && double(j) > qpos) x = -INFINITY;
        // HF sliding_window_overlay: kv_idx > q_idx - window (bidirectional: |q - kv| < window).
        const bool sink_token = double(j) < double(o.sink_tokens);
        if (o.window && !sink_token && !(double(j) > qpos - double(*o.window))) x = -INFINITY;
        if (o.window && !o.causal && !(double(j) < qpos + double(*o.window))) x = -INFINITY;
        // HF chunked_overlay: kv_idx // chunk == q_idx // chunk.
        if (o.chunk_size && std::floor(double(j) / double(*o.chunk_size)) != std::floor(qpos / double(*o.chunk_size)))
          x = -INFINITY;
        s[j] = x;
        m = std::fmax(m, x);
      }
      // gpt-oss (HF eager): the sink logit joins the row, the max is taken over both, and its
      // probability is dropped after the softmax.
      const double sink = o.sinks ? double(o.sinks[h]) : -INFINITY;
      m = std::fmax(m, sink);
      if (m == -INFINITY) continue;  // fully masked: zeros
      double l = o.sinks ? std::exp(sink - m) : 0.0;
      for (auto& x : s) l += (x = std::exp(x - m));
      for (std::size_t j = 0; j < kv_len; ++j) {
        const double p = s[j] / l;
        if (weights) (*weights)[(h * q_len + i) * kv_len + j] = p;
        for (std::size_t d = 0; d < D; ++d) out[(i * H + h) * D + d] += p * v[(j * Hkv + kvh) * D + d];
      }
    }
  }
  return out;
}

// One example of each positional bias term (PositionBias) for up to 8 heads. The attention and KV
// cache suites check every case against the twin above, so a new bias term adds its case here,
// beside its term in the twin.
struct PositionBiasCase {
  const char* name;
  PositionBias bias;
};
static inline std::vector<PositionBiasCase> position_bias_cases() {
  static const std::vector<float> slopes = {0.5f, 0.25f, 0.125f, 0.0625f, 0.03f, 0.02f, 0.01f, 0.005f};
  static const std::vector<float> table = [] {  // [32 buckets][up to 8 heads]
    std::vector<float> t(32 * 8);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = 0.1f * float(i % 17) - 0.8f;
    return t;
  }();
  PositionBias alibi;
  alibi.alibi_slopes = slopes.data();
  PositionBias t5_decoder;  // keys past max_distance 128 share the last bucket
  t5_decoder.t5_table = table.data();
  t5_decoder.t5 = {false, 32, 128};
  PositionBias both = t5_decoder;
  both.t5.bidirectional = true;
  both.alibi_slopes = slopes.data();
  return {{"alibi", alibi}, {"t5 decoder", t5_decoder}, {"t5 encoder and alibi", both}};
}

}  // namespace posenc::reference
