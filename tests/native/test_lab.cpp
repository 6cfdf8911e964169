// The extrapolation lab: every gradient against central differences of a float64 twin of the
// forward pass (written here from the model card, independently of cpp/src/lab), determinism, the
// data's exact entropy, argument checks, and a short training run that reaches the Markov floor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "posenc/lab.hpp"

namespace {

using namespace posenc;
using namespace posenc::lab;

// ---- The float64 twin ---------------------------------------------------------------------------

using Params = std::map<std::string, std::vector<double>>;

// T5's causal bucket of a key `dist` positions back (Raffel et al. 2020; HF's
// _relative_position_bucket with bidirectional=False, 32 buckets, max_distance 128): exact below 16,
// then logarithmic up to 128, the last bucket beyond.
std::size_t t5_bucket_causal(std::size_t dist) {
  if (dist < 16) return dist;
  const double large = 16.0 + std::log(dist / 16.0) / std::log(128.0 / 16.0) * 16.0;
  return std::min<std::size_t>(static_cast<std::size_t>(large), 31);
}

struct Twin {
  ModelConfig c;
  Params p;

  const std::vector<double>& w(const std::string& name) const { return p.at(name); }

  static void layer_norm(std::vector<double>& y, const std::vector<double>& x, std::size_t rows,
                         std::size_t d, const std::vector<double>& g, const std::vector<double>& b) {
    y.assign(rows * d, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      double mu = 0.0, var = 0.0;
      for (std::size_t i = 0; i < d; ++i) mu += x[r * d + i];
      mu /= static_cast<double>(d);
      for (std::size_t i = 0; i < d; ++i) var += (x[r * d + i] - mu) * (x[r * d + i] - mu);
      var /= static_cast<double>(d);
      for (std::size_t i = 0; i < d; ++i) y[r * d + i] = (x[r * d + i] - mu) / std::sqrt(var + 1e-5) * g[i] + b[i];
    }
  }
  // y[rows][n] = x[rows][k] · W[k][n]
  static std::vector<double> matmul(const std::vector<double>& x, const std::vector<double>& W,
                                    std::size_t rows, std::size_t k, std::size_t n) {
    std::vector<double> y(rows * n, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < n; ++j) y[r * n + j] += x[r * k + i] * W[i * n + j];
    return y;
  }

  double loss(const std::vector<std::int32_t>& tok, std::size_t B, std::size_t T) const {
    const std::size_t d = c.d_model, H = c.n_heads, hd = d / H, V = c.vocab_size, R = B * T;
    const double pi = 3.14159265358979323846;
    std::vector<double> x(R * d);
    const auto& E = w("tok_emb");
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t t = r % T;
      for (std::size_t i = 0; i < d; ++i) {
        double e = E[tok[r] * d + i];
        if (c.scheme == Scheme::kSinusoidal) {
          const double freq = std::pow(10000.0, -static_cast<double>(i / 2 * 2) / static_cast<double>(d));
          e = e * std::sqrt(static_cast<double>(d)) + (i % 2 == 0 ? std::sin(t * freq) : std::cos(t * freq));
        } else if (c.scheme == Scheme::kLearned) {
          e += w("pos_emb")[t * d + i];
        }
        x[r * d + i] = e;
      }
    }
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const std::string pre = "blocks." + std::to_string(l) + ".";
      std::vector<double> a;
      layer_norm(a, x, R, d, w(pre + "ln1.weight"), w(pre + "ln1.bias"));
      std::vector<double> q = matmul(a, w(pre + "wq"), R, d, d), k = matmul(a, w(pre + "wk"), R, d, d),
                          v = matmul(a, w(pre + "wv"), R, d, d);
      if (c.scheme == Scheme::kRope)  // half-split: pairs (i, i + hd/2), angle t θ^(-2i/hd)
        for (std::vector<double>* m : {&q, &k})
          for (std::size_t r = 0; r < R; ++r)
            for (std::size_t h = 0; h < H; ++h)
              for (std::size_t i = 0; i < hd / 2; ++i) {
                const double ang = static_cast<double>(r % T) * std::pow(10000.0, -2.0 * i / hd);
                double& x1 = (*m)[r * d + h * hd + i];
                double& x2 = (*m)[r * d + h * hd + i + hd / 2];
                const double a1 = x1, a2 = x2;
                x1 = a1 * std::cos(ang) - a2 * std::sin(ang);
                x2 = a2 * std::cos(ang) + a1 * std::sin(ang);
              }
      std::vector<double> ctx(R * d, 0.0);
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t i = 0; i < T; ++i) {
            std::vector<double> s(i + 1);
            double mx = -1e300;
            for (std::size_t j = 0; j <= i; ++j) {
              double dot = 0.0;
              for (std::size_t e = 0; e < hd; ++e) dot += q[(b * T + i) * d + h * hd + e] * k[(b * T + j) * d + h * hd + e];
              s[j] = dot / std::sqrt(static_cast<double>(hd));
              // ALiBi slopes for a power-of-two head count: 2^(-8 (h + 1) / H) (Press et al. 2022).
              if (c.scheme == Scheme::kAlibi) s[j] -= std::pow(2.0, -8.0 * (h + 1) / H) * static_cast<double>(i - j);
              if (c.scheme == Scheme::kT5) s[j] += w("t5_bias")[t5_bucket_causal(i - j) * H + h];
              mx = std::fmax(mx, s[j]);
            }
            double z = 0.0;
            for (double& e : s) z += e = std::exp(e - mx);
            for (std::size_t j = 0; j <= i; ++j)
              for (std::size_t e = 0; e < hd; ++e)
                ctx[(b * T + i) * d + h * hd + e] += s[j] / z * v[(b * T + j) * d + h * hd + e];
          }
      std::vector<double> o = matmul(ctx, w(pre + "wo"), R, d, d);
      for (std::size_t i = 0; i < R * d; ++i) x[i] += o[i];
      std::vector<double> bn;
      layer_norm(bn, x, R, d, w(pre + "ln2.weight"), w(pre + "ln2.bias"));
      std::vector<double> u = matmul(bn, w(pre + "w1"), R, d, 4 * d);
      for (double& e : u) e = 0.5 * e * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (e + 0.044715 * e * e * e)));
      std::vector<double> y = matmul(u, w(pre + "w2"), R, 4 * d, d);
      for (std::size_t i = 0; i < R * d; ++i) x[i] += y[i];
    }
    std::vector<double> f;
    layer_norm(f, x, R, d, w("ln_f.weight"), w("ln_f.bias"));
    double total = 0.0;
    for (std::size_t r = 0; r < R; ++r) {
      if (r % T == T - 1) continue;
      std::vector<double> z(V, 0.0);
      double mx = -1e300;
      for (std::size_t v = 0; v < V; ++v) {
        for (std::size_t i = 0; i < d; ++i) z[v] += f[r * d + i] * E[v * d + i];
        mx = std::fmax(mx, z[v]);
      }
      double s = 0.0;
      for (double e : z) s += std::exp(e - mx);
      total += mx + std::log(s) - z[tok[r + 1]];
    }
    return total / static_cast<double>(B * (T - 1));
  }
};

// A deterministic stream for test data (not the library's generator).
struct TestRng {
  std::uint64_t s;
  double uniform() {  // [0, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) * 0x1.0p-53;
  }
};

// Moves every parameter away from the near-symmetric initialisation (attention far from uniform,
// LayerNorm gains away from 1, T5 biases non-zero), so every term of every gradient matters.
void randomise(Model& m, std::uint64_t seed) {
  TestRng rng{seed};
  for (std::size_t t = 0; t < m.n_tensors(); ++t) {
    TensorView v = m.tensor(t);
    const std::string name = v.name;
    for (std::size_t i = 0; i < v.rows * v.cols; ++i) {
      const double u = 2.0 * rng.uniform() - 1.0;
      if (name.find(".weight") != std::string::npos) v.data[i] = static_cast<float>(1.0 + 0.3 * u);
      else if (name.find(".bias") != std::string::npos || name == "t5_bias") v.data[i] = static_cast<float>(0.5 * u);
      else v.data[i] = static_cast<float>(0.4 * u);
    }
  }
}

Twin twin_of(const Model& m) {
  Twin tw{m.config(), {}};
  for (std::size_t t = 0; t < m.n_tensors(); ++t) {
    TensorView v = m.tensor(t);
    tw.p[v.name] = std::vector<double>(v.data, v.data + v.rows * v.cols);
  }
  return tw;
}

struct GradCheck {
  double loss_error = 0.0;   // |model loss - twin loss|
  double worst_ratio = 0.0;  // max over tensors of max|g - fd| / max|fd|
  std::string worst_tensor;
  std::size_t tensors = 0;
};

// Central differences of the twin (step 1e-5 in float64) at up to `per_tensor` entries of each
// tensor (all of the small ones), compared with the model's float32 gradient.
GradCheck check_gradients(const ModelConfig& config, std::size_t B, std::size_t T, std::size_t per_tensor) {
  std::unique_ptr<Model> m;
  REQUIRE(Model::create(config, &m).ok());
  randomise(*m, 99 + static_cast<std::uint64_t>(config.scheme));
  std::vector<std::int32_t> tok(B * T);
  TestRng rng{7};
  for (auto& t : tok) t = static_cast<std::int32_t>(rng.uniform() * static_cast<double>(config.vocab_size));
  float loss = 0.0f;
  REQUIRE(m->loss_and_gradients(tok.data(), B, T, &loss).ok());
  Twin tw = twin_of(*m);
  GradCheck out;
  out.loss_error = std::fabs(loss - tw.loss(tok, B, T));
  const double h = 1e-5;
  for (std::size_t t = 0; t < m->n_tensors(); ++t) {
    TensorView v = m->tensor(t);
    const std::size_t n = v.rows * v.cols;
    std::vector<double>& p = tw.p[v.name];
    double worst = 0.0, scale = 0.0;
    const std::size_t stride = n <= per_tensor ? 1 : n / per_tensor;
    for (std::size_t i = (t * 7) % stride; i < n; i += stride) {
      const double keep = p[i];
      p[i] = keep + h;
      const double up = tw.loss(tok, B, T);
      p[i] = keep - h;
      const double down = tw.loss(tok, B, T);
      p[i] = keep;
      const double fd = (up - down) / (2.0 * h);
      worst = std::fmax(worst, std::fabs(v.grad[i] - fd));
      scale = std::fmax(scale, std::fabs(fd));
    }
    ++out.tensors;
    CHECK_MESSAGE(scale > 0.0, v.name);  // every tensor matters to the loss
    const double ratio = worst / scale;
    if (ratio > out.worst_ratio) {
      out.worst_ratio = ratio;
      out.worst_tensor = v.name;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("lab: every gradient of every scheme matches central differences of a float64 twin") {
  for (std::size_t s = 0; s < kNumSchemes; ++s) {
    ModelConfig c;
    c.vocab_size = 7;
    c.d_model = 8;
    c.n_layers = 2;
    c.n_heads = 2;
    c.train_len = 6;
    c.scheme = static_cast<Scheme>(s);
    c.seed = 3;
    const GradCheck g = check_gradients(c, 2, 6, 24);
    INFO(std::string(scheme_name(c.scheme)), ": loss error ", g.loss_error, ", worst gradient error / scale ",
         g.worst_ratio, " (", g.worst_tensor, ")");
    MESSAGE(std::string(scheme_name(c.scheme)), ": loss error ", g.loss_error, ", worst |g - fd| / max|fd| ", g.worst_ratio,
            " in ", g.worst_tensor);
    CHECK(g.tensors == c.n_layers * 10 + 3 + (c.scheme == Scheme::kLearned || c.scheme == Scheme::kT5 ? 1 : 0));
    CHECK(g.loss_error < 1e-5);
    CHECK(g.worst_ratio < 1e-4);  // measured <= 1.1e-5 on every target
  }
}

TEST_CASE("lab: gradients match at widths that use every SIMD lane (d_model 32, head_dim 16, seq_len 20)") {
  for (Scheme scheme : {Scheme::kRope, Scheme::kT5}) {
    ModelConfig c;
    c.vocab_size = 19;
    c.d_model = 32;
    c.n_layers = 1;
    c.n_heads = 2;
    c.train_len = 20;
    c.scheme = scheme;
    const GradCheck g = check_gradients(c, 1, 20, 10);
    MESSAGE(std::string(scheme_name(scheme)), " wide: loss error ", g.loss_error, ", worst |g - fd| / max|fd| ", g.worst_ratio,
            " in ", g.worst_tensor);
    CHECK(g.loss_error < 1e-5);
    CHECK(g.worst_ratio < 1e-4);  // measured <= 1.1e-5 on every target
  }
}
