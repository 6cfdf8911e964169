#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"
#include "helpers.hpp"
#include "reference.hpp"
#include "subsets.hpp"

using posenc::test::max_abs_diff;
using posenc::test::random_floats;

TEST_CASE("attention: matches the float64 twin over head sizes 1…17 and key-block edges, GQA, causal" * kKernels) {
  for (std::size_t D = 1; D <= 17; ++D) {
    for (const std::size_t kv_len : {1u, 3u, 63u, 64u, 65u, 130u}) {
      for (const bool causal : {false, true}) {
        const std::size_t q_len = std::min<std::size_t>(kv_len, 5), H = 4, Hkv = 2;
        posenc::AttentionOptions o;
        o.n_heads = H;
        o.n_kv_heads = Hkv;
        o.head_dim = D;
        o.causal = causal;
        const auto q = random_floats(q_len * H * D, 1 + D), k = random_floats(kv_len * Hkv * D, 2 + D),
                   v = random_floats(kv_len * Hkv * D, 3 + D);
        std::vector<float> out(q.size());
        REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data()).ok());
        CAPTURE(D);
        CAPTURE(kv_len);
        CAPTURE(causal);
        CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, kv_len, o)) <= 2e-6);
      }
    }
  }
}

TEST_CASE(
    "attention: every positional bias term, additive bias, softcap and scale equal the twin; weights rows sum to 1" *
    kKernels) {
  const std::size_t H = 3, D = 8, q_len = 7, kv_len = 170;
  const auto bias = random_floats(H * q_len * kv_len, 9);
  const auto q = random_floats(q_len * H * D, 4, 2.0f), k = random_floats(kv_len * H * D, 5, 2.0f),
             v = random_floats(kv_len * H * D, 6);
  // Each positional bias term (reference.hpp), causal and not; an additive bias with softcap; a
  // scale with the last terms.
  const auto cases = posenc::reference::position_bias_cases();
  std::vector<posenc::AttentionOptions> variants;
  for (const auto& c : cases)
    for (const bool causal : {true, false}) {
      posenc::AttentionOptions o;
      static_cast<posenc::PositionBias&>(o) = c.bias;
      o.causal = causal;
      variants.push_back(o);
    }
  posenc::AttentionOptions additive;
  additive.bias = bias.data();
  additive.bias_per_head = true;
  additive.softcap = 1.5;
  posenc::AttentionOptions scaled;
  static_cast<posenc::PositionBias&>(scaled) = cases.back().bias;
  scaled.causal = true;
  scaled.scale = 0.05;
  variants.push_back(additive);
  variants.push_back(scaled);
  for (std::size_t variant = 0; variant < variants.size(); ++variant) {
    posenc::AttentionOptions o = variants[variant];
    o.n_heads = H;
    o.head_dim = D;
    std::vector<float> out(q.size()), w(H * q_len * kv_len);
    std::vector<double> w_twin;
    REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data(), w.data()).ok());
    const auto want = posenc::reference::attention(q, k, v, q_len, kv_len, o, &w_twin);
    CAPTURE(variant);
    CHECK(max_abs_diff(out, want) <= 2e-6);
    CHECK(max_abs_diff(w, w_twin) <= 2e-6);
    for (std::size_t r = 0; r < H * q_len; ++r) {
      double sum = 0;
      for (std::size_t j = 0; j < kv_len; ++j) sum += w[r * kv_len + j];
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    // The streaming path (no weights) gives the same output.
    std::vector<float> out2(q.size());
    REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out2.data()).ok());
    CHECK(max_abs_diff(out2, std::vector<double>(out.begin(), out.end())) <= 1e-6);
  }
}

// dot_keys scores keys four at a time (dot4, whose four sums reduce_add4 ends together) and the
// last ones alone (dot, reduce_add): a key scored in a group of four and the same key scored alone
// must be the same bits, so that a score does not depend on where its key falls (kernels/dot.hpp).
// The raw scores are ONNX attention's qk_matmul_output (mode 0).
TEST_CASE("attention: a key scored in a group of four and alone gives the same bits" * kKernels) {
  for (const std::int64_t D : {16, 19, 32, 48, 64, 80, 128}) {
    for (std::int64_t t = 0; t < 4; ++t) {
      const std::int64_t T = 5;  // keys 0-3 in dot4, key 4 alone: a copy of key t
      const auto q = random_floats(std::size_t(D), 900 + std::uint32_t(D));
      auto k = random_floats(std::size_t(T * D), 901 + std::uint32_t(D + t));
      const auto v = random_floats(std::size_t(T * D), 902 + std::uint32_t(D));
      std::copy_n(k.begin() + t * D, D, k.begin() + 4 * D);
      posenc::AttentionInputs in;
      in.q = {q.data(), posenc::DType::kFloat32, 4, {1, 1, 1, D}};
      in.k = {k.data(), posenc::DType::kFloat32, 4, {1, 1, T, D}};
      in.v = {v.data(), posenc::DType::kFloat32, 4, {1, 1, T, D}};
      std::vector<float> y(static_cast<std::size_t>(D)), qk(static_cast<std::size_t>(T));
      REQUIRE(posenc::onnx_attention(in, posenc::AttentionAttrs{}, y.data(), nullptr, nullptr, qk.data()).ok());
      CAPTURE(D);
      CAPTURE(t);
      CHECK(qk[std::size_t(t)] == qk[4]);
    }
  }
}

TEST_CASE("attention: softmax stays finite at ±1e4 logits" * kKernels) {
  const std::size_t D = 4, kv_len = 100;
  std::vector<float> q = {100, 0, 0, 0}, k(kv_len * D, 0.0f), v(kv_len * D);
  for (std::size_t j = 0; j < kv_len; ++j) {
    k[j * D] = (j % 2 ? 1.0f : -1.0f) * 200.0f;  // logits ±1e4 with scale 0.5
    v[j * D] = float(j);
  }
  posenc::AttentionOptions o;
  o.n_heads = 1;
  o.head_dim = D;
  std::vector<float> out(D), w(kv_len);
  REQUIRE(posenc::attention(q.data(), k.data(), v.data(), 1, kv_len, o, out.data(), w.data()).ok());
  for (float x : out) CHECK(std::isfinite(x));
  CHECK(out[0] == doctest::Approx(50.0));  // the mean of the odd j, each weighted 1/50
  CHECK(w[1] == doctest::Approx(0.02));
  CHECK(w[0] == 0.0f);
}

TEST_CASE("attention: without positions it is permutation-equivariant; with RoPE scores depend on i - j only" *
          kKernels) {
  // "Dog bites man" vs "man bites dog": the same three token vectors in another order.
  const std::size_t H = 2, D = 8, n = 3;
  const auto x = random_floats(n * H * D, 42);
  const int perm[3] = {2, 1, 0};
  std::vector<float> y(n * H * D);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t c = 0; c < H * D; ++c) y[t * H * D + c] = x[perm[t] * H * D + c];
  posenc::AttentionOptions o;
  o.n_heads = H;
  o.head_dim = D;
  std::vector<float> ox(x.size()), oy(y.size());
  REQUIRE(posenc::attention(x.data(), x.data(), x.data(), n, n, o, ox.data()).ok());
  REQUIRE(posenc::attention(y.data(), y.data(), y.data(), n, n, o, oy.data()).ok());
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t c = 0; c < H * D; ++c)
      CHECK(oy[t * H * D + c] == doctest::Approx(ox[perm[t] * H * D + c]).epsilon(1e-5));

  // With RoPE the permuted sentence is no longer the same: position tells them apart.
  posenc::RopeParams rp;
  rp.head_dim = D;
  std::vector<double> inv(D / 2);
  double af;
  REQUIRE(posenc::rope_frequencies(rp, 0, inv.data(), inv.size(), &af).ok());
  o.rope_inv_freq = inv.data();
  o.rope_rot_dim = D;
  REQUIRE(posenc::attention(x.data(), x.data(), x.data(), n, n, o, ox.data()).ok());
  REQUIRE(posenc::attention(y.data(), y.data(), y.data(), n, n, o, oy.data()).ok());
  double differ = 0;
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t c = 0; c < H * D; ++c)
      differ = std::fmax(differ, std::fabs(oy[t * H * D + c] - ox[perm[t] * H * D + c]));
  CHECK(differ > 1e-3);

  // RoPE inside: the weight of (query, key) pairs with the same i - j is the same when every
  // token carries the same vector.
  std::vector<float> same(6 * D);
  for (std::size_t t = 0; t < 6; ++t)
    for (std::size_t d = 0; d < D; ++d) same[t * D + d] = float(d + 1) / D;
  posenc::AttentionOptions r;
  r.n_heads = 1;
  r.head_dim = D;
  r.rope_inv_freq = inv.data();
  r.rope_rot_dim = D;
  r.scale = 1.0;
  std::vector<float> out(6 * D), w(36);
  REQUIRE(posenc::attention(same.data(), same.data(), same.data(), 6, 6, r, out.data(), w.data()).ok());
  // Unnormalized scores: log w[i][j] + log Z_i; compare score differences along diagonals.
  auto score_diff = [&](int i, int j) { return std::log(w[i * 6 + j]) - std::log(w[i * 6 + i]); };
  CHECK(score_diff(3, 1) == doctest::Approx(score_diff(5, 3)).epsilon(1e-4));
  CHECK(score_diff(2, 0) == doctest::Approx(score_diff(4, 2)).epsilon(1e-4));
}

TEST_CASE("attention: a fully masked row gives zeros; bad input gives a status" * kKernels) {
  const std::size_t D = 4;
  const auto q = random_floats(2 * D, 1), k = random_floats(3 * D, 2), v = random_floats(3 * D, 3);
  std::vector<float> bias(2 * 3, 0.0f);
  bias[0] = bias[1] = bias[2] = -INFINITY;  // query 0 sees nothing
  posenc::AttentionOptions o;
  o.n_heads = 1;
  o.head_dim = D;
  o.bias = bias.data();
  std::vector<float> out(2 * D, 7.0f), w(6, 7.0f);
  REQUIRE(posenc::attention(q.data(), k.data(), v.data(), 2, 3, o, out.data(), w.data()).ok());
  for (std::size_t d = 0; d < D; ++d) CHECK(out[d] == 0.0f);
  for (std::size_t j = 0; j < 3; ++j) CHECK(w[j] == 0.0f);
  CHECK(std::isfinite(out[D]));
  o.bias = nullptr;
  o.n_kv_heads = 3;
  o.n_heads = 2;
  CHECK(std::string(posenc::attention(q.data(), k.data(), v.data(), 1, 1, o, out.data()).message).find("n_kv_heads") !=
        std::string::npos);
  o = {};
  o.n_heads = 1;
  CHECK(std::string(posenc::attention(q.data(), k.data(), v.data(), 1, 1, o, out.data()).message).find("head_dim") !=
        std::string::npos);
  o.head_dim = D;
  const float bad_slope = NAN;
  o.alibi_slopes = &bad_slope;  // the rule KvCache::attend keeps too (position_bias::check)
  CHECK(std::string(posenc::attention(q.data(), k.data(), v.data(), 1, 1, o, out.data()).message) ==
        "alibi slopes must be finite");
}

TEST_CASE("attention_check: attention's rules without the tensors, each with attention's own message" * kKernels) {
  // The JS layer runs attention_check before it copies the tensors: its message must be the one
  // attention() gives, and a good set of options must pass both.
  const std::size_t D = 4;
  const auto q = random_floats(2 * D, 1), k = random_floats(3 * D, 2), v = random_floats(3 * D, 3);
  std::vector<float> out(2 * D), w(2 * 3);
  const float nan_sink = NAN;
  posenc::AttentionOptions good;
  good.n_heads = 1;
  good.head_dim = D;
  std::vector<posenc::AttentionOptions> cases(9, good);
  cases[0].n_heads = 2, cases[0].n_kv_heads = 3;
  cases[1].scale = NAN;
  cases[2].softcap = INFINITY;
  cases[3].window = 0;
  cases[4].sink_tokens = 1;
  cases[5].chunk_size = 4, cases[5].window = 2, cases[5].sink_tokens = 1;
  cases[6].temperature = posenc::AttentionOptions::Temperature{-1.0, 0.1};
  cases[7].sinks = &nan_sink;
  cases[8].head_dim = 0;
  CHECK(posenc::attention_check(2, 3, good, true).ok());
  CHECK(posenc::attention(q.data(), k.data(), v.data(), 2, 3, good, out.data(), w.data()).ok());
  for (const posenc::AttentionOptions& o : cases) {
    const posenc::Status checked = posenc::attention_check(2, 3, o, true);
    const posenc::Status run = posenc::attention(q.data(), k.data(), v.data(), 2, 3, o, out.data(), w.data());
    CHECK(checked.code == posenc::StatusCode::kBadArgument);
    CHECK(std::string(checked.message) == run.message);
  }
  CHECK(posenc::attention_check(0, 3, good).code == posenc::StatusCode::kBadArgument);
  CHECK(std::string(posenc::attention(nullptr, k.data(), v.data(), 2, 3, good, out.data()).message) ==
        "q, k, v and out must not be null");
}

TEST_CASE("onnx_attention: shape and attribute errors name the slot or attribute" * kKernels) {
  std::vector<float> data(2 * 3 * 4 * 8, 0.5f);
  auto t = [&](std::initializer_list<std::int64_t> dims) {
    posenc::TensorRef r;
    r.data = data.data();
    r.rank = int(dims.size());
    std::copy(dims.begin(), dims.end(), r.dims);
    return r;
  };
  posenc::AttentionInputs in{t({1, 2, 8}), t({1, 2, 8}), t({1, 2, 8})};
  posenc::AttentionAttrs a;
  std::vector<float> y(64);
  auto message = [&] {
    return std::string(posenc::onnx_attention(in, a, y.data(), nullptr, nullptr, nullptr).message);
  };
  CHECK(message().find("q_num_heads and kv_num_heads are required") != std::string::npos);
  a.q_num_heads = 3;
  a.kv_num_heads = 1;
  CHECK(message().find("multiple of q_num_heads") != std::string::npos);
  a.q_num_heads = 4;
  a.kv_num_heads = 3;
  CHECK(message().find("multiple of kv_num_heads") != std::string::npos);
  a = {};
  in = {t({1, 2, 3, 4}), t({1, 2, 3, 4}), t({1, 2, 3, 4})};
  in.attn_mask = t({3, 3, 3});
  CHECK(message().find("attn_mask does not broadcast") != std::string::npos);
  in.attn_mask = t({3, 5});
  CHECK(message().find("attn_mask's last dimension") != std::string::npos);
  in.attn_mask = {};
  in.past_key = t({1, 2, 1, 4});
  CHECK(message().find("past_key and past_value must be given together") != std::string::npos);
  in.past_key = {};
  a.qk_matmul_output_mode = 4;
  CHECK(message().find("qk_matmul_output_mode") != std::string::npos);
  a = {};
  a.opset = 23;
  std::vector<std::int64_t> nonpad = {2};
  in.nonpad_kv_seqlen.data = nonpad.data();
  in.nonpad_kv_seqlen.dtype = posenc::DType::kInt64;
  in.nonpad_kv_seqlen.rank = 1;
  in.nonpad_kv_seqlen.dims[0] = 1;
  CHECK(message().find("opset 24") != std::string::npos);
  a.opset = 24;
  CHECK(message().empty());
  in.k = t({1, 4, 3, 4});
  in.v = t({1, 4, 3, 4});
  CHECK(message().find("multiple of kv_num_heads") != std::string::npos);
}

TEST_CASE("attention: more queries than keys, causal: the early queries see no key and give zeros" * kKernels) {
  // Regression (found by fuzz_kernels): queries sit at kv_len - q_len + i, negative here.
  posenc::AttentionOptions o;
  o.n_heads = 2;
  o.head_dim = 14;
  o.causal = true;
  o.softcap = 0.5;
  const std::size_t q_len = 3, kv_len = 1;
  const std::vector<float> q(q_len * 2 * 14, -2.0f), k(kv_len * 2 * 14, -2.0f), v(kv_len * 2 * 14, -1.0f);
  std::vector<float> out(q.size(), 5.0f);
  REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data()).ok());
  const auto want = posenc::reference::attention(q, k, v, q_len, kv_len, o);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(want[i]));
  CHECK(out[0] == 0.0f);            // query 0 at position -2: nothing visible
  CHECK(out[2 * 2 * 14] == -1.0f);  // query 2 at position 0 sees key 0
}

TEST_CASE("attention: sliding window, StreamingLLM sink tokens and gpt-oss sink logits equal the twin" * kKernels) {
  const std::size_t H = 2, D = 8;
  const std::vector<float> sinks = {0.5f, -1.25f};
  for (const std::size_t kv_len : {1u, 63u, 65u, 200u}) {
    for (const std::size_t q_len : {std::size_t{1}, std::size_t{7}, kv_len}) {
      for (const std::size_t window : {1u, 5u, 64u, 100u}) {
        for (const bool causal : {true, false}) {
          for (const std::size_t sink_tokens : {0u, 4u}) {
            for (const bool learned_sinks : {false, true}) {
              posenc::AttentionOptions o;
              o.n_heads = H;
              o.head_dim = D;
              o.causal = causal;
              o.window = window;
              o.sink_tokens = sink_tokens;
              if (learned_sinks) o.sinks = sinks.data();
              const std::size_t ql = std::min(q_len, kv_len);
              const auto q = random_floats(ql * H * D, 11), k = random_floats(kv_len * H * D, 12),
                         v = random_floats(kv_len * H * D, 13);
              std::vector<float> out(q.size()), w(H * ql * kv_len);
              std::vector<double> w_ref;
              CAPTURE(kv_len);
              CAPTURE(ql);
              CAPTURE(window);
              CAPTURE(causal);
              CAPTURE(sink_tokens);
              CAPTURE(learned_sinks);
              const auto ref = posenc::reference::attention(q, k, v, ql, kv_len, o, &w_ref);
              REQUIRE(posenc::attention(q.data(), k.data(), v.data(), ql, kv_len, o, out.data()).ok());
              CHECK(max_abs_diff(out, ref) <= 2e-6);  // tiled, blocks outside the window skipped
              REQUIRE(posenc::attention(q.data(), k.data(), v.data(), ql, kv_len, o, out.data(), w.data()).ok());
              CHECK(max_abs_diff(out, ref) <= 2e-6);  // row by row, with weights
              CHECK(max_abs_diff(w, w_ref) <= 1e-6);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("attention: window 1 sees only the own key; a sink logit s gives weight e^x / (e^x + e^s)" * kKernels) {
  const std::size_t T = 70, D = 4;
  const auto q = random_floats(T * D, 21), k = random_floats(T * D, 22), v = random_floats(T * D, 23);
  posenc::AttentionOptions o;
  o.n_heads = 1;
  o.head_dim = D;
  o.causal = true;
  o.window = 1;
  std::vector<float> out(T * D);
  REQUIRE(posenc::attention(q.data(), k.data(), v.data(), T, T, o, out.data()).ok());
  CHECK(out == v);  // softmax over one key is exactly 1
  // One key with logit x = q·k/√D = 0 (q = 0) and a sink logit ln 3: the key's weight is 1/4.
  const std::vector<float> q0(D, 0.0f), k0(D, 1.0f), v0 = {4, 8, -4, 2};
  const float sink = std::log(3.0f);
  posenc::AttentionOptions s;
  s.n_heads = 1;
  s.head_dim = D;
  s.sinks = &sink;
  std::vector<float> y(D), w(1);
  REQUIRE(posenc::attention(q0.data(), k0.data(), v0.data(), 1, 1, s, y.data(), w.data()).ok());
  CHECK(w[0] == doctest::Approx(0.25f).epsilon(1e-6));
  CHECK(y[0] == doctest::Approx(1.0f).epsilon(1e-6));
  o.window = 0;
  CHECK(posenc::attention(q.data(), k.data(), v.data(), T, T, o, out.data()).code == posenc::StatusCode::kBadArgument);
  o.window.reset();
  o.sink_tokens = 4;
  CHECK(posenc::attention(q.data(), k.data(), v.data(), T, T, o, out.data()).code == posenc::StatusCode::kBadArgument);
}

TEST_CASE("attention: Llama 4 chunked local attention and the NoPE layers' temperature equal the twin" * kKernels) {
  const std::size_t H = 2, D = 8;
  for (const std::size_t kv_len : {63u, 130u, 200u}) {
    for (const std::size_t q_len : {kv_len, std::size_t{7}, kv_len + 5}) {  // prefill, decode offset, more queries
      for (const std::size_t chunk : {1u, 16u, 64u, 100u}) {
        for (const bool causal : {true, false}) {
          posenc::AttentionOptions o;
          o.n_heads = H;
          o.head_dim = D;
          o.causal = causal;
          o.chunk_size = chunk;
          const auto q = random_floats(q_len * H * D, 31), k = random_floats(kv_len * H * D, 32),
                     v = random_floats(kv_len * H * D, 33);
          std::vector<float> out(q.size());
          CAPTURE(kv_len);
          CAPTURE(q_len);
          CAPTURE(chunk);
          CAPTURE(causal);
          REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data()).ok());
          CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, kv_len, o)) <= 2e-6);
          o.chunk_size.reset();  // the sliding window with more queries than keys, too
          o.window = chunk;
          REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data()).ok());
          CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, kv_len, o)) <= 2e-6);
        }
      }
    }
  }
  // The temperature: 1 below floor_scale - 1, log(2)·0.1 + 1 from there (floor_scale 4 here).
  CHECK(posenc::irope_attention_scale(2, 4, 0.1) == 1.0);
  CHECK(posenc::irope_attention_scale(3, 4, 0.1) == doctest::Approx(1 + 0.1 * std::log(2.0)));
  CHECK(posenc::irope_attention_scale(8190, 8192, 0.1) == 1.0);
  CHECK(posenc::irope_attention_scale(8191, 8192, 0.1) == doctest::Approx(1 + 0.1 * std::log(2.0)));
  // Its rule (irope_check) is attention_check's for the temperature option, with one message.
  CHECK(posenc::irope_check(8192, 0.1).ok());
  const double bad_temperatures[][2] = {{0.0, 0.1}, {-1.0, 0.1}, {NAN, 0.1}, {8.0, INFINITY}};
  for (const auto& [floor_scale, attn_scale] : bad_temperatures) {
    const posenc::Status s = posenc::irope_check(floor_scale, attn_scale);
    CHECK(std::string(s.message) == "temperature floor_scale must be finite and > 0, attn_scale finite");
    posenc::AttentionOptions bad;
    bad.n_heads = 1;
    bad.head_dim = 4;
    bad.temperature = posenc::AttentionOptions::Temperature{floor_scale, attn_scale};
    CHECK(std::string(posenc::attention_check(1, 1, bad).message) == s.message);
  }
  posenc::AttentionOptions t;
  t.n_heads = H;
  t.head_dim = D;
  t.causal = true;
  t.temperature = posenc::AttentionOptions::Temperature{4.0, 0.5};
  const std::size_t T = 40;
  const auto q = random_floats(T * H * D, 34), k = random_floats(T * H * D, 35), v = random_floats(T * H * D, 36);
  std::vector<float> out(q.size());
  REQUIRE(posenc::attention(q.data(), k.data(), v.data(), T, T, t, out.data()).ok());
  CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, T, T, t)) <= 2e-6);
  t.chunk_size = 0;
  CHECK(posenc::attention(q.data(), k.data(), v.data(), T, T, t, out.data()).code == posenc::StatusCode::kBadArgument);
}

TEST_CASE("attention: float16 K and V give exactly the float32 result on the same (widened) values" * kKernels) {
  const std::size_t H = 4, Hkv = 2, D = 16, T = 150;
  // Random float16 bit patterns in [0.25, 2) with random signs, and their values (decoded here).
  std::mt19937 rng(7);
  auto halves = [&](std::size_t n, std::vector<std::uint16_t>* bits, std::vector<float>* vals) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto b = static_cast<std::uint16_t>((rng() & 0x8000u) | ((13u + rng() % 2) << 10) | (rng() & 0x3ffu));
      bits->push_back(b);
      vals->push_back(
          static_cast<float>((b & 0x8000 ? -1.0 : 1.0) * std::ldexp(1024 + (b & 0x3ff), ((b >> 10) & 0x1f) - 25)));
    }
  };
  std::vector<std::uint16_t> k16, v16;
  std::vector<float> k, v;
  halves(T * Hkv * D, &k16, &k);
  halves(T * Hkv * D, &v16, &v);
  const auto q = random_floats(T * H * D, 61);
  std::vector<double> inv(D / 2);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(D));
  for (const bool rope : {false, true}) {
    for (const bool weights : {false, true}) {
      posenc::AttentionOptions o;
      o.n_heads = H;
      o.n_kv_heads = Hkv;
      o.head_dim = D;
      o.causal = true;
      if (rope) {
        o.rope_inv_freq = inv.data();
        o.rope_rot_dim = D;
      }
      std::vector<float> a(q.size()), b(q.size()), wa(H * T * T), wb(H * T * T);
      REQUIRE(posenc::attention(q.data(), k.data(), v.data(), T, T, o, a.data(), weights ? wa.data() : nullptr).ok());
      o.kv_dtype = posenc::DType::kFloat16;
      REQUIRE(
          posenc::attention(q.data(), k16.data(), v16.data(), T, T, o, b.data(), weights ? wb.data() : nullptr).ok());
      CAPTURE(rope);
      CAPTURE(weights);
      CHECK(a == b);
      CHECK(wa == wb);
    }
  }
  posenc::AttentionOptions bad;
  bad.n_heads = H;
  bad.head_dim = D;
  bad.kv_dtype = posenc::DType::kBool;
  std::vector<float> out(q.size());
  CHECK(posenc::attention(q.data(), k.data(), v.data(), T, T, bad, out.data()).code ==
        posenc::StatusCode::kBadArgument);
}

TEST_CASE(
    "attention: q_pos places the queries; q run in pieces of 64-row blocks gives the one-call result bit for bit" *
    kKernels) {
  const std::size_t H = 4, Hkv = 2, D = 16, T = 150;
  const auto k = random_floats(T * Hkv * D, 71), v = random_floats(T * Hkv * D, 72);
  std::vector<float> slopes = {0.5f, 0.25f, 0.125f, 0.0625f}, t5(32 * H);
  for (std::size_t e = 0; e < t5.size(); ++e) t5[e] = 0.01f * static_cast<float>(e % 17);
  // q_pos anywhere (before the keys, inside, past the last key): the twin places query i at q_pos + i.
  for (const std::int64_t q_pos : {-5, 0, 40, 149, 160}) {
    for (const bool causal : {true, false}) {
      const std::size_t q_len = 20;
      const auto q = random_floats(q_len * H * D, 73);
      posenc::AttentionOptions o;
      o.n_heads = H;
      o.n_kv_heads = Hkv;
      o.head_dim = D;
      o.causal = causal;
      o.q_pos = q_pos;
      o.alibi_slopes = slopes.data();
      o.t5_table = t5.data();
      o.window = 64;
      std::vector<float> out(q.size());
      CAPTURE(q_pos);
      CAPTURE(causal);
      REQUIRE(posenc::attention(q.data(), k.data(), v.data(), q_len, T, o, out.data()).ok());
      CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, T, o)) <= 2e-6);
    }
  }
  // A prefill of all T queries, and its rows in pieces [r0, r1) at q_pos = r0: every fused term,
  // both layouts, float16 K/V too.
  std::vector<double> inv(D / 2);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(D));
  const auto q = random_floats(T * H * D, 74);
  std::mt19937 rng(75);  // float16 bits in ±[0.25, 1)
  std::vector<std::uint16_t> k16(k.size()), v16(v.size());
  for (auto* h : {&k16, &v16})
    for (auto& b : *h) b = static_cast<std::uint16_t>((rng() & 0x8000u) | ((13u + rng() % 2) << 10) | (rng() & 0x3ffu));
  for (const bool heads_major : {false, true}) {
    for (const int terms : {0, 1, 2}) {
      posenc::AttentionOptions o;
      o.n_heads = H;
      o.n_kv_heads = Hkv;
      o.head_dim = D;
      o.causal = true;
      o.heads_major = heads_major;
      if (terms == 0) {
        o.rope_inv_freq = inv.data();
        o.rope_rot_dim = D;
        o.window = 50;
        o.sink_tokens = 4;
      }
      if (terms == 1) {
        o.alibi_slopes = slopes.data();
        o.chunk_size = 64;
        o.temperature = posenc::AttentionOptions::Temperature{8.0, 0.1};
      }
      if (terms == 2) {
        o.t5_table = t5.data();
        o.kv_dtype = posenc::DType::kFloat16;
        o.rope_inv_freq = inv.data();
        o.rope_rot_dim = D;
      }
      const void* kd = terms == 2 ? static_cast<const void*>(k16.data()) : k.data();
      const void* vd = terms == 2 ? static_cast<const void*>(v16.data()) : v.data();
      std::vector<float> whole(q.size());
      REQUIRE(posenc::attention(q.data(), kd, vd, T, T, o, whole.data()).ok());
      for (const std::size_t piece : {1u, 33u, 64u, 100u, 128u}) {
        std::vector<float> pieced(q.size());
        for (std::size_t r0 = 0; r0 < T; r0 += piece) {
          const std::size_t n = std::min(piece, T - r0);
          // The rows [r0, r0 + n) of every head, in the layout's order.
          std::vector<float> qp(n * H * D), yp(n * H * D);
          for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < n; ++i)
              for (std::size_t d = 0; d < D; ++d) {
                const std::size_t from = heads_major ? (h * T + r0 + i) * D + d : ((r0 + i) * H + h) * D + d;
                qp[heads_major ? (h * n + i) * D + d : (i * H + h) * D + d] = q[from];
              }
          posenc::AttentionOptions op = o;
          op.q_pos = static_cast<std::int64_t>(r0);
          REQUIRE(posenc::attention(qp.data(), kd, vd, n, T, op, yp.data()).ok());
          for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < n; ++i)
              for (std::size_t d = 0; d < D; ++d) {
                const std::size_t to = heads_major ? (h * T + r0 + i) * D + d : ((r0 + i) * H + h) * D + d;
                pieced[to] = yp[heads_major ? (h * n + i) * D + d : (i * H + h) * D + d];
              }
        }
        CAPTURE(heads_major);
        CAPTURE(terms);
        CAPTURE(piece);
        // Pieces of whole 64-row query blocks run the very same tiles; others group rows into other
        // tiles (a tile's score row length is its longest row's), which changes sums' rounding only.
        if (piece % 64 == 0) {
          CHECK(pieced == whole);
        } else {
          double worst = 0;
          for (std::size_t e = 0; e < whole.size(); ++e)
            worst = std::max(worst, std::fabs(double(pieced[e]) - whole[e]));
          CHECK(worst <= 1e-6);
        }
      }
    }
  }
  posenc::AttentionOptions bad;
  bad.n_heads = H;
  bad.n_kv_heads = Hkv;
  bad.head_dim = D;
  bad.q_pos = (std::int64_t{1} << 53) + 1;
  std::vector<float> out(q.size());
  CHECK(posenc::attention(q.data(), k.data(), v.data(), T, T, bad, out.data()).code ==
        posenc::StatusCode::kBadArgument);
}

TEST_CASE("onnx_attention: Q in pieces (q_row0, q_len_total) gives the one-call rows bit for bit; masks, past, nonpad" *
          kKernels) {
  const std::int64_t B = 2, Hq = 4, Hkv = 2, S = 150, D = 8, P = 10, T = P + S;
  const auto q = random_floats(std::size_t(B * Hq * S * D), 91), k = random_floats(std::size_t(B * Hkv * S * D), 92),
             v = random_floats(std::size_t(B * Hkv * S * D), 93), pk = random_floats(std::size_t(B * Hkv * P * D), 94),
             pv = random_floats(std::size_t(B * Hkv * P * D), 95),
             mask_f = random_floats(std::size_t(B * Hq * S * T), 96);
  std::vector<std::uint8_t> mask_b(mask_f.size());
  for (std::size_t e = 0; e < mask_b.size(); ++e) mask_b[e] = mask_f[e] > -0.8f;
  std::vector<std::int64_t> nonpad = {S - 7, S};
  auto ref = [](const void* data, posenc::DType dtype, std::initializer_list<std::int64_t> dims) {
    posenc::TensorRef r;
    r.data = data;
    r.dtype = dtype;
    r.rank = int(dims.size());
    std::copy(dims.begin(), dims.end(), r.dims);
    return r;
  };
  constexpr auto f32 = posenc::DType::kFloat32;
  for (const bool three_d : {false, true}) {
    for (const int variant : {0, 1, 2, 3}) {  // float mask [B, Hq, S, T] + past; bool [S, T]; nonpad; none
      posenc::AttentionInputs in;
      const auto tensor = [&](const std::vector<float>& x, std::int64_t heads, std::int64_t len) {
        return three_d ? ref(x.data(), f32, {B, len, heads * D}) : ref(x.data(), f32, {B, heads, len, D});
      };
      in.q = tensor(q, Hq, S);
      in.k = tensor(k, Hkv, S);
      in.v = tensor(v, Hkv, S);
      std::int64_t kv_total = S;
      if (variant == 0) {
        in.past_key = ref(pk.data(), f32, {B, Hkv, P, D});
        in.past_value = ref(pv.data(), f32, {B, Hkv, P, D});
        in.attn_mask = ref(mask_f.data(), f32, {B, Hq, S, T});
        kv_total = T;
      }
      if (variant == 1) in.attn_mask = ref(mask_b.data(), posenc::DType::kBool, {S, S});
      if (variant == 2) in.nonpad_kv_seqlen = ref(nonpad.data(), posenc::DType::kInt64, {B});
      posenc::AttentionAttrs a;
      a.is_causal = 1;
      if (three_d) {
        a.q_num_heads = Hq;
        a.kv_num_heads = Hkv;
      }
      for (const int mode : {-1, 3}) {  // no qk_matmul_output (tiled), or the softmax (row by row)
        if (mode == 3) a.qk_matmul_output_mode = 3;
        const auto n_y = std::size_t(B * Hq * S * D), n_qk = std::size_t(B * Hq * S * kv_total);
        std::vector<float> y(n_y), qk(n_qk);
        REQUIRE(posenc::onnx_attention(in, a, y.data(), nullptr, nullptr, mode == 3 ? qk.data() : nullptr).ok());
        for (const std::int64_t piece : {64, 128}) {
          std::vector<float> y_all(n_y), qk_all(n_qk);
          for (std::int64_t r0 = 0; r0 < S; r0 += piece) {
            const std::int64_t n = std::min(piece, S - r0);
            // The piece's rows of every (b, h) slab (4D) or of every batch (3D).
            const std::int64_t slabs = three_d ? B : B * Hq, width = three_d ? Hq * D : D;
            std::vector<float> qp(std::size_t(slabs * n * width)), yp(qp.size()),
                qkp(std::size_t(B * Hq * n * kv_total));
            for (std::int64_t sl = 0; sl < slabs; ++sl)
              std::copy_n(q.begin() + (sl * S + r0) * width, n * width, qp.begin() + sl * n * width);
            posenc::AttentionInputs part = in;
            part.q = three_d ? ref(qp.data(), f32, {B, n, Hq * D}) : ref(qp.data(), f32, {B, Hq, n, D});
            part.q_row0 = r0;
            part.q_len_total = S;
            REQUIRE(
                posenc::onnx_attention(part, a, yp.data(), nullptr, nullptr, mode == 3 ? qkp.data() : nullptr).ok());
            for (std::int64_t sl = 0; sl < slabs; ++sl)
              std::copy_n(yp.begin() + sl * n * width, n * width, y_all.begin() + (sl * S + r0) * width);
            for (std::int64_t bh = 0; bh < B * Hq; ++bh)
              std::copy_n(qkp.begin() + bh * n * kv_total, n * kv_total, qk_all.begin() + (bh * S + r0) * kv_total);
          }
          CAPTURE(three_d);
          CAPTURE(variant);
          CAPTURE(mode);
          CAPTURE(piece);
          CHECK(y_all == y);
          if (mode == 3) CHECK(qk_all == qk);
        }
      }
      posenc::AttentionInputs wrong = in;
      wrong.q_row0 = 1;  // without q_len_total, then past its end
      std::vector<float> y(std::size_t(B * Hq * S * D));
      CHECK(std::string(posenc::onnx_attention(wrong, a, y.data(), nullptr, nullptr, nullptr).message).find("q_row0") !=
            std::string::npos);
      wrong.q_len_total = S;
      CHECK(std::string(posenc::onnx_attention(wrong, a, y.data(), nullptr, nullptr, nullptr).message).find("q_row0") !=
            std::string::npos);
    }
  }
}
