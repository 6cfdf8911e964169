// The lab on the pool (set_num_threads): one model's training steps, at the default positions and
// at randomized ones, and its evaluation at a longer length give the same bits on 1, 2 and 3
// threads, for every scheme — parameters, gradients, losses, gradient norms and evaluation rows.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "posenc/lab.hpp"
#include "posenc/threads.hpp"
#include "subsets.hpp"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

namespace {

using namespace posenc;
using namespace posenc::lab;

// Everything a short run produces, as bytes: every tensor and its gradient after the last step, each
// step's loss and gradient norm, and the evaluation's loss and per-position losses.
struct Trace {
  std::vector<float> floats;
  std::vector<double> doubles;
};

Trace train_and_evaluate(const ModelConfig& c, std::size_t batch, std::size_t eval_len) {
  Trace out;
  std::unique_ptr<Dataset> data;
  REQUIRE(Dataset::create(DatasetConfig{Task::kMarkov, c.vocab_size, 5}, &data).ok());
  std::unique_ptr<Model> model;
  REQUIRE(Model::create(c, &model).ok());
  const std::size_t T = c.train_len;
  std::vector<std::int32_t> tokens(batch * T), positions(batch * T);
  for (std::size_t s = 0; s < 4; ++s) {
    REQUIRE(data->sample(tokens.data(), batch, T, 100 + s).ok());
    StepOptions o;
    if (s % 2 == 1) {  // randomized positions (Ruoss et al. 2023) on every other step
      REQUIRE(random_positions(positions.data(), batch, T, c.max_positions, 200 + s).ok());
      o.positions = positions.data();
    }
    float loss = 0.0f, norm = 0.0f;
    REQUIRE(model->train_step(tokens.data(), batch, T, 1e-2, &loss, &norm, o).ok());
    out.floats.push_back(loss);
    out.floats.push_back(norm);
  }
  for (std::size_t i = 0; i < model->n_tensors(); ++i) {
    const TensorView t = model->tensor(i);
    out.floats.insert(out.floats.end(), t.data, t.data + t.rows * t.cols);
    out.floats.insert(out.floats.end(), t.grad, t.grad + t.rows * t.cols);
  }
  std::vector<std::int32_t> eval(3 * eval_len);
  REQUIRE(data->sample(eval.data(), 3, eval_len, 7).ok());
  std::vector<EvalOptions> evals(1);
  if (c.scheme == Scheme::kRope || c.scheme == Scheme::kXpos) evals.push_back({RopeScaling::kYarn, 0.0});
  for (const EvalOptions& e : evals) {
    double loss = 0.0;
    std::vector<double> per_position(eval_len - 1);
    REQUIRE(model->evaluate(eval.data(), 3, eval_len, e, &loss, per_position.data()).ok());
    out.doubles.push_back(loss);
    out.doubles.insert(out.doubles.end(), per_position.begin(), per_position.end());
  }
  return out;
}

template <class V>
bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

}  // namespace

TEST_CASE("lab threads: every scheme trains and evaluates bitwise the same on 1, 2 and 3 threads" * kKernels) {
  const int before = num_threads();
  // d_model 12 / 2 heads leaves SIMD tails everywhere (head_dim 6, 4·d_model 48); d_model 32 / 4
  // heads fills the lanes. batch · seq_len = 4 · 24 = 96 rows: every split has several blocks.
  struct Size {
    std::size_t d_model, n_heads;
  };
  for (const Size z : {Size{12, 2}, Size{32, 4}}) {
    for (std::size_t k = 0; k < kNumSchemes; ++k) {
      ModelConfig c;
      c.vocab_size = 8;
      c.d_model = z.d_model;
      c.n_heads = z.n_heads;
      c.n_layers = 2;
      c.train_len = 24;
      c.max_positions = 72;  // randomized positions reach 3 T (learned has a row for each)
      c.scheme = static_cast<Scheme>(k);
      c.seed = 11;
      CAPTURE(scheme_name(c.scheme));
      CAPTURE(z.d_model);
      REQUIRE(set_num_threads(1).ok());
      const Trace one = train_and_evaluate(c, 4, 48);
      for (const int n : {2, 3}) {
        CAPTURE(n);
        REQUIRE(set_num_threads(n).ok());
        const Trace many = train_and_evaluate(c, 4, 48);
        CHECK(same_bits(many.floats, one.floats));
        CHECK(same_bits(many.doubles, one.doubles));
      }
    }
  }
  REQUIRE(set_num_threads(before).ok());
}

#endif  // threads available
