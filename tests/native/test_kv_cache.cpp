// posenc::KvCache against the float64 attention twin (reference.hpp) and against apply_rope:
// appends in pieces, GQA, chunk edges, every bias term, float16, the window's ring with sinks,
// llama.cpp's context shift, the thread count, and bad input.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "posenc/posenc.hpp"
#include "reference.hpp"
#include "subsets.hpp"

using posenc::test::max_abs_diff;
using posenc::test::random_floats;

namespace {

std::unique_ptr<posenc::KvCache> make(const posenc::KvCacheOptions& o) {
  std::unique_ptr<posenc::KvCache> c;
  const posenc::Status s = posenc::KvCache::create(o, &c);
  REQUIRE_MESSAGE(s.ok(), s.message);
  return c;
}

// Appends k, v [T][Hk][D] in pieces of `piece` tokens.
void append_all(posenc::KvCache& c, const std::vector<float>& k, const std::vector<float>& v, std::size_t T,
                std::size_t row, std::size_t piece) {
  for (std::size_t t = 0; t < T; t += piece) {
    const std::size_t n = std::min(piece, T - t);
    const posenc::Status s = c.append(k.data() + t * row, v.data() + t * row, n, nullptr);
    REQUIRE_MESSAGE(s.ok(), s.message);
  }
}

std::vector<float> to_float(const std::vector<double>& x) { return {x.begin(), x.end()}; }

}  // namespace

TEST_CASE(
    "kv cache: attend equals the float64 twin — GQA, chunk edges, pieces, causal, every bias term, softcap, sinks" *
    kKernels) {
  const auto cases = posenc::reference::position_bias_cases();  // ALiBi, T5 (to 1300 keys: past max_distance)
  const std::vector<float> sink_logits = {0.3f, -0.7f, 1.1f, 0.0f, 2.0f, -2.0f, 0.5f, 0.9f};
  for (const std::size_t D : {std::size_t{17}, std::size_t{64}}) {
    for (const std::size_t T : {std::size_t{1}, std::size_t{63}, std::size_t{513}, std::size_t{1300}}) {
      // Rows per kv head: 4, 20, 64, 1 and 10 (tiles of 4 and their tails).
      for (const auto& shape : {std::array<std::size_t, 3>{1, 8, 2}, {5, 8, 2}, {16, 8, 2}, {1, 3, 3}, {5, 6, 3}}) {
        const std::size_t q_len = shape[0], H = shape[1], Hk = shape[2];
        if (q_len > T) continue;
        posenc::KvCacheOptions co;
        co.n_kv_heads = Hk;
        co.head_dim = D;
        co.capacity = T + 3;
        auto c = make(co);
        const auto k = random_floats(T * Hk * D, 21), v = random_floats(T * Hk * D, 22),
                   q = random_floats(q_len * H * D, 23);
        append_all(*c, k, v, T, Hk * D, T % 7 + 1);
        CHECK(c->length() == T);
        for (std::size_t variant = 0; variant < 3 + cases.size(); ++variant) {
          posenc::KvAttendOptions ko;
          ko.n_heads = H;
          posenc::AttentionOptions ao;
          ao.n_heads = H;
          ao.n_kv_heads = Hk;
          ao.head_dim = D;
          ao.causal = true;
          if (variant == 1) {
            ko.softcap = ao.softcap = 2.0;
            ko.scale = ao.scale = 0.5;
          }
          if (variant == 2) {
            ko.sinks = ao.sinks = sink_logits.data();
            ko.causal = ao.causal = false;
          }
          if (variant >= 3) {
            static_cast<posenc::PositionBias&>(ko) = cases[variant - 3].bias;
            static_cast<posenc::PositionBias&>(ao) = cases[variant - 3].bias;
          }
          CAPTURE(D);
          CAPTURE(T);
          CAPTURE(q_len);
          CAPTURE(H);
          CAPTURE(variant);
          std::vector<float> out(q.size());
          REQUIRE(c->attend(q.data(), q_len, ko, out.data()).ok());
          CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, T, ao)) <= 2e-6);
        }
      }
    }
  }
}

TEST_CASE("kv cache: a long cache (chunks of several touches, empty last chunks) equals the float64 twin" * kKernels) {
  const std::size_t T = 9000, H = 4, Hk = 2, D = 8, q_len = 2;
  posenc::KvCacheOptions co;
  co.n_kv_heads = Hk;
  co.head_dim = D;
  co.capacity = T;
  auto c = make(co);
  const auto k = random_floats(T * Hk * D, 91), v = random_floats(T * Hk * D, 92), q = random_floats(q_len * H * D, 93);
  append_all(*c, k, v, T, Hk * D, 4096);
  posenc::KvAttendOptions ko;
  ko.n_heads = H;
  posenc::AttentionOptions ao;
  ao.n_heads = H;
  ao.n_kv_heads = Hk;
  ao.head_dim = D;
  ao.causal = true;
  std::vector<float> out(q.size());
  REQUIRE(c->attend(q.data(), q_len, ko, out.data()).ok());
  CHECK(max_abs_diff(out, posenc::reference::attention(q, k, v, q_len, T, ao)) <= 2e-6);
}

TEST_CASE("kv cache: RoPE — keys stored as apply_rope turns them; attend equals the twin on float64-rotated q and k" *
          kKernels) {
  const std::size_t T = 700, H = 4, Hk = 1, D = 48, rot = 32, off = 8, q_len = 3;
  std::vector<double> inv(rot / 2);
  for (std::size_t i = 0; i < rot / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(rot));
  for (const auto layout : {posenc::RopeLayout::kHalfSplit, posenc::RopeLayout::kInterleaved}) {
    posenc::KvCacheOptions co;
    co.n_kv_heads = Hk;
    co.head_dim = D;
    co.capacity = 1024;
    co.rope_inv_freq = inv.data();
    co.rope_rot_dim = rot;
    co.rope.layout = layout;
    co.rope.rot_offset = off;
    co.rope.precision = posenc::Precision::kAccurate;
    auto c = make(co);
    const auto k = random_floats(T * Hk * D, 31), v = random_floats(T * Hk * D, 32),
               q = random_floats(q_len * H * D, 33);
    append_all(*c, k, v, T, Hk * D, 1);
    std::vector<float> got(T * Hk * D), want = k;
    std::vector<double> pos(T);
    c->read(got.data(), nullptr, pos.data());
    REQUIRE(posenc::apply_rope(want.data(), T, Hk, D, inv.data(), rot, nullptr, 0.0, co.rope).ok());
    CHECK(got == want);  // bit for bit: the same call
    CHECK(pos[T - 1] == double(T - 1));
    // The twin: rotate in float64 (the dims [off, off + rot) of each head), then plain attention.
    auto rotate = [&](const std::vector<float>& x, std::size_t n, std::size_t heads, double p0) {
      std::vector<float> y = x;
      for (std::size_t t = 0; t < n; ++t)
        for (std::size_t h = 0; h < heads; ++h) {
          std::vector<float> part(x.begin() + (t * heads + h) * D + off, x.begin() + (t * heads + h) * D + off + rot);
          std::vector<double> ang(rot / 2);
          for (std::size_t i = 0; i < rot / 2; ++i) ang[i] = (p0 + double(t)) * inv[i];
          const auto r = posenc::reference::rope(part, 1, 1, rot, rot, ang, layout == posenc::RopeLayout::kInterleaved);
          for (std::size_t e = 0; e < rot; ++e) y[(t * heads + h) * D + off + e] = float(r[e]);
        }
      return y;
    };
    posenc::AttentionOptions ao;
    ao.n_heads = H;
    ao.n_kv_heads = Hk;
    ao.head_dim = D;
    ao.causal = true;
    posenc::KvAttendOptions ko;
    ko.n_heads = H;
    std::vector<float> out(q.size());
    REQUIRE(c->attend(q.data(), q_len, ko, out.data()).ok());
    CHECK(max_abs_diff(out, posenc::reference::attention(rotate(q, q_len, H, T - q_len), rotate(k, T, Hk, 0), v, q_len,
                                                         T, ao)) <= 5e-6);
  }
}

TEST_CASE("kv cache: float16 storage attends exactly as float32 over the same (rounded) keys and values" * kKernels) {
  const std::size_t T = 1100, H = 8, Hk = 4, D = 64;
  posenc::KvCacheOptions co;
  co.n_kv_heads = Hk;
  co.head_dim = D;
  co.capacity = T;
  co.dtype = posenc::DType::kFloat16;
  auto c = make(co);
  const auto k = random_floats(T * Hk * D, 41), v = random_floats(T * Hk * D, 42), q = random_floats(H * D, 43);
  append_all(*c, k, v, T, Hk * D, 100);
  CHECK(c->bytes() == 2 * T * Hk * D * 2 + T * 8);
  std::vector<float> k16(T * Hk * D), v16(T * Hk * D);
  c->read(k16.data(), v16.data(), nullptr);
  CHECK(max_abs_diff(k16, std::vector<double>(k.begin(), k.end())) <= 1e-3);
  posenc::AttentionOptions ao;
  ao.n_heads = H;
  ao.n_kv_heads = Hk;
  ao.head_dim = D;
  ao.causal = true;
  posenc::KvAttendOptions ko;
  ko.n_heads = H;
  std::vector<float> out(q.size());
  REQUIRE(c->attend(q.data(), 1, ko, out.data()).ok());
  CHECK(max_abs_diff(out, posenc::reference::attention(q, k16, v16, 1, T, ao)) <= 2e-6);
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // a build with threads
TEST_CASE("kv cache: the result is bit for bit the same on 1, 2 and 3 threads" * kKernels) {
  const int before = posenc::num_threads();
  const std::size_t T = 9000, H = 8, Hk = 8, D = 32;  // 16 chunks of 1024 keys, the last ones empty
  const auto k = random_floats(T * Hk * D, 51), v = random_floats(T * Hk * D, 52), q = random_floats(4 * H * D, 53);
  std::vector<float> one(q.size());
  for (const int threads : {1, 2, 3}) {
    REQUIRE(posenc::set_num_threads(threads).ok());
    posenc::KvCacheOptions co;
    co.n_kv_heads = Hk;
    co.head_dim = D;
    co.capacity = T;
    co.dtype = threads == 3 ? posenc::DType::kFloat16 : posenc::DType::kFloat32;
    auto c = make(co);
    append_all(*c, k, v, T, Hk * D, 1000);
    posenc::KvAttendOptions ko;
    ko.n_heads = H;
    std::vector<float> out(q.size());
    REQUIRE(c->attend(q.data(), 4, ko, out.data()).ok());
    CAPTURE(threads);
    if (threads == 1) one = out;
    if (threads == 2) CHECK(out == one);
    if (threads == 3) {  // float16 on 3 threads against float16 on 1
      REQUIRE(posenc::set_num_threads(1).ok());
      std::vector<float> out1(q.size());
      REQUIRE(c->attend(q.data(), 4, ko, out1.data()).ok());
      CHECK(out == out1);
    }
  }
  REQUIRE(posenc::set_num_threads(before).ok());
}
#endif

TEST_CASE("kv cache: a window's ring with sink tokens equals windowed attention over the whole sequence" * kKernels) {
  const std::size_t H = 4, Hk = 2, D = 16, T = 904;  // a multiple of every q_len
  const auto k = random_floats(T * Hk * D, 61), v = random_floats(T * Hk * D, 62);
  for (const std::size_t window : {std::size_t{1}, std::size_t{100}, std::size_t{600}}) {
    for (const std::size_t sinks : {std::size_t{0}, std::size_t{4}}) {
      for (const std::size_t q_len : {std::size_t{1}, std::size_t{8}}) {
        posenc::KvCacheOptions co;
        co.n_kv_heads = Hk;
        co.head_dim = D;
        co.window = window;
        co.sink_tokens = sinks;
        co.capacity = sinks + window + q_len - 1;
        auto c = make(co);
        posenc::AttentionOptions ao;
        ao.n_heads = H;
        ao.n_kv_heads = Hk;
        ao.head_dim = D;
        ao.causal = true;
        ao.window = window;
        ao.sink_tokens = sinks;
        posenc::KvAttendOptions ko;
        ko.n_heads = H;
        CAPTURE(window);
        CAPTURE(sinks);
        CAPTURE(q_len);
        // Decode q_len tokens at a time: append them, then attend with their queries.
        std::size_t held = 0;
        for (std::size_t t = 0; t < T; t += q_len) {
          REQUIRE(c->append(k.data() + t * Hk * D, v.data() + t * Hk * D, q_len, nullptr).ok());
          held = t + q_len;
          if (held % 150 >= q_len && held != T) continue;  // check now and then, and at the end
          const auto q = random_floats(q_len * H * D, unsigned(held));
          std::vector<float> out(q.size());
          REQUIRE(c->attend(q.data(), q_len, ko, out.data()).ok());
          const std::vector<float> kk(k.begin(), k.begin() + held * Hk * D), vv(v.begin(), v.begin() + held * Hk * D);
          CHECK(max_abs_diff(out, posenc::reference::attention(q, kk, vv, q_len, held, ao)) <= 2e-6);
        }
        CHECK(c->length() == std::min(held, co.capacity));
      }
    }
  }
  // Too small a ring for 2 queries: the first query's window would need an evicted key.
  posenc::KvCacheOptions co;
  co.n_kv_heads = 1;
  co.head_dim = 4;
  co.window = 3;
  co.capacity = 3;
  auto c = make(co);
  const auto x = random_floats(10 * 4, 1), q = random_floats(2 * 4, 2);
  REQUIRE(c->append(x.data(), x.data(), 10, nullptr).ok());
  posenc::KvAttendOptions ko;
  ko.n_heads = 1;
  std::vector<float> out(8);
  const posenc::Status s = c->attend(q.data(), 2, ko, out.data());
  CHECK(s.code == posenc::StatusCode::kBadArgument);
  CHECK(std::string(s.message).find("evicted") != std::string::npos);
  CHECK(c->attend(q.data(), 1, ko, out.data()).ok());
}

TEST_CASE("kv cache: shift is llama.cpp's context shift — keys as if appended at their new positions" * kKernels) {
  const std::size_t T = 300, Hk = 2, D = 32, keep = 4, drop = 100;
  std::vector<double> inv(D / 2);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(500000.0, -2.0 * double(i) / double(D));
  posenc::RopeParams rp;
  rp.head_dim = D;
  rp.theta = 500000.0;
  rp.scaling = posenc::RopeScaling::kYarn;
  rp.factor = 4.0;
  rp.original_max_position_embeddings = 64;
  posenc::GgmlRope g;
  REQUIRE(posenc::ggml_rope_params(rp, 0, &g).ok());
  for (const auto precision : {posenc::Precision::kFast, posenc::Precision::kAccurate, posenc::Precision::kGgml}) {
    for (const auto dtype : {posenc::DType::kFloat32, posenc::DType::kFloat16}) {
      posenc::KvCacheOptions co;
      co.n_kv_heads = Hk;
      co.head_dim = D;
      co.capacity = T;
      co.dtype = dtype;
      co.rope_inv_freq = inv.data();
      co.rope_rot_dim = D;
      co.rope.precision = precision;
      if (precision == posenc::Precision::kGgml) co.rope.ggml = &g;
      else co.rope.attention_factor = 1.3;  // kept, not applied twice
      auto c = make(co);
      const auto k = random_floats(T * Hk * D, 71), v = random_floats(T * Hk * D, 72);
      append_all(*c, k, v, T, Hk * D, 64);
      REQUIRE(c->shift(-std::int64_t(drop), keep).ok());
      CHECK(c->length() == T - drop);
      std::vector<float> got(c->length() * Hk * D), gotv(got.size());
      std::vector<double> pos(c->length());
      c->read(got.data(), gotv.data(), pos.data());
      // Want: the kept tokens, appended afresh at positions 0 … length-1.
      auto fresh = make(co);
      std::vector<float> kk(k.begin(), k.begin() + keep * Hk * D), vv(v.begin(), v.begin() + keep * Hk * D);
      kk.insert(kk.end(), k.begin() + (keep + drop) * Hk * D, k.end());
      vv.insert(vv.end(), v.begin() + (keep + drop) * Hk * D, v.end());
      append_all(*fresh, kk, vv, T - drop, Hk * D, T);
      std::vector<float> want(got.size()), wantv(got.size());
      fresh->read(want.data(), wantv.data(), nullptr);
      CAPTURE(int(precision));
      CAPTURE(int(dtype));
      CHECK(max_abs_diff(got, std::vector<double>(want.begin(), want.end())) <=
            (dtype == posenc::DType::kFloat16 ? 4e-3 : 2e-5));
      CHECK(gotv == wantv);
      for (std::size_t t = 0; t < pos.size(); ++t) CHECK(pos[t] == double(t));
      // The next token goes on at position length.
      REQUIRE(c->append(k.data(), v.data(), 1, nullptr).ok());
      pos.resize(c->length());
      c->read(nullptr, nullptr, pos.data());
      CHECK(pos.back() == double(T - drop));
    }
  }
}

TEST_CASE("kv cache: bad input gives a status naming the rule and leaves the cache as it was") {
  std::unique_ptr<posenc::KvCache> c;
  posenc::KvCacheOptions co;
  CHECK(posenc::KvCache::create(co, &c).code == posenc::StatusCode::kBadArgument);
  co.n_kv_heads = 8;
  co.head_dim = 128;
  co.capacity = std::numeric_limits<std::size_t>::max() / 2;
  const posenc::Status big = posenc::KvCache::create(co, &c);
  CHECK(big.code == posenc::StatusCode::kTooLarge);
  co.capacity = 4;
  co.sink_tokens = 1;
  CHECK(std::string(posenc::KvCache::create(co, &c).message) == "sink_tokens needs a window");
  co.sink_tokens = 0;
  co.n_kv_heads = 2;
  co.head_dim = 2;
  c = make(co);
  const std::vector<float> x(40, 1.0f);
  std::vector<float> out(12);
  posenc::KvAttendOptions ko;
  ko.n_heads = 2;
  CHECK(c->attend(x.data(), 1, ko, out.data()).code == posenc::StatusCode::kBadArgument);  // empty
  const double p[2] = {5, 5};
  CHECK(std::string(c->append(x.data(), x.data(), 2, p).message).find("rise") != std::string::npos);
  CHECK(c->length() == 0);
  REQUIRE(c->append(x.data(), x.data(), 3, nullptr).ok());
  CHECK(c->append(x.data(), x.data(), 2, nullptr).code == posenc::StatusCode::kBadArgument);  // full
  CHECK(c->length() == 3);
  CHECK(c->shift(-1, -1).code == posenc::StatusCode::kBadArgument);
  ko.n_heads = 3;
  CHECK(c->attend(x.data(), 1, ko, out.data()).code == posenc::StatusCode::kBadArgument);  // not a multiple
  ko.n_heads = 2;
  const float bad_slopes[2] = {0.5f, std::numeric_limits<float>::infinity()};
  ko.alibi_slopes = bad_slopes;
  CHECK(std::string(c->attend(x.data(), 1, ko, out.data()).message) == "alibi slopes must be finite");
  ko.alibi_slopes = nullptr;
  ko.t5_table = x.data();
  ko.t5 = posenc::T5BucketParams{false, 1, 128};
  CHECK(std::string(c->attend(x.data(), 1, ko, out.data()).message).find("num_buckets") != std::string::npos);
}

TEST_CASE("kv cache: attend_check gives attend's rules without the tensors, each with attend's own message" *
          kKernels) {
  posenc::KvCacheOptions co;
  co.n_kv_heads = 2;
  co.head_dim = 2;
  co.capacity = 4;
  auto c = make(co);
  const std::vector<float> x(2 * 2 * 2, 1.0f), q(2 * 4 * 2, 0.5f);  // 2 tokens; 2 queries of 4 heads
  std::vector<float> out(q.size());
  posenc::KvAttendOptions good;
  good.n_heads = 4;
  CHECK(std::string(c->attend_check(1, good).message) == "the cache is empty: append keys and values first");
  REQUIRE(c->append(x.data(), x.data(), 2, nullptr).ok());
  const float nan_sinks[4] = {0.0f, NAN, 0.0f, 0.0f};
  std::vector<posenc::KvAttendOptions> cases(4, good);
  cases[0].n_heads = 3;
  cases[1].scale = NAN;
  cases[2].softcap = -INFINITY;
  cases[3].sinks = nan_sinks;
  CHECK(c->attend_check(2, good).ok());
  CHECK(c->attend(q.data(), 2, good, out.data()).ok());
  for (const posenc::KvAttendOptions& o : cases) {
    const posenc::Status checked = c->attend_check(2, o);
    CHECK(checked.code == posenc::StatusCode::kBadArgument);
    CHECK(std::string(checked.message) == c->attend(q.data(), 2, o, out.data()).message);
  }
  CHECK(std::string(c->attend_check(3, good).message) == "q_len > length needs the queries' positions");
}

TEST_CASE("kv cache: shift works by position — keys appended at p + 100 and moved by -100 equal keys appended at p" *
          kKernels) {
  const std::size_t Hk = 2, D = 16, T = 30;
  std::vector<double> inv(D / 2);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(D));
  posenc::KvCacheOptions co;
  co.n_kv_heads = Hk;
  co.head_dim = D;
  co.capacity = T;
  co.rope_inv_freq = inv.data();
  co.rope_rot_dim = D;
  co.rope.precision = posenc::Precision::kAccurate;
  const auto k = random_floats(T * Hk * D, 81), v = random_floats(T * Hk * D, 82);
  std::vector<double> late(T), early(T);
  for (std::size_t t = 0; t < T; ++t) late[t] = 100.0 + double(t), early[t] = double(t);
  auto moved = make(co), fresh = make(co);
  REQUIRE(moved->append(k.data(), v.data(), T, late.data()).ok());
  REQUIRE(fresh->append(k.data(), v.data(), T, early.data()).ok());
  REQUIRE(moved->shift(-100, 0).ok());  // positions [0, 100) hold nothing: nothing dropped, all moved
  CHECK(moved->length() == T);
  std::vector<float> a(T * Hk * D), b(T * Hk * D);
  std::vector<double> pa(T);
  moved->read(a.data(), nullptr, pa.data());
  fresh->read(b.data(), nullptr, nullptr);
  CHECK(max_abs_diff(a, std::vector<double>(b.begin(), b.end())) <= 2e-6);
  CHECK(pa == early);
  // Dropping by position: [10, 15) goes, 15 … 29 move to 10 … 24; then positions past the end drop nothing.
  REQUIRE(moved->shift(-5, 10).ok());
  CHECK(moved->length() == T - 5);
  REQUIRE(moved->shift(-5, 1000).ok());
  CHECK(moved->length() == T - 5);
  moved->read(nullptr, nullptr, pa.data());
  CHECK(pa[9] == 9.0);
  CHECK(pa[10] == 10.0);
  CHECK(pa[T - 6] == double(T - 6));
  // Moving on (delta > 0) from position 20: the next append goes after the last position held.
  REQUIRE(moved->shift(7, 20).ok());
  REQUIRE(moved->append(k.data(), v.data(), 1, nullptr).ok());
  moved->read(nullptr, nullptr, pa.data());
  CHECK(pa[19] == 19.0);
  CHECK(pa[20] == 27.0);
  pa.resize(moved->length());
  moved->read(nullptr, nullptr, pa.data());
  CHECK(pa.back() == double(T - 6 + 7 + 1));
}

TEST_CASE("kv cache: create refuses a rotation as apply_rope does, with apply_rope's messages") {
  // The cache's RoPE is apply_rope's (it turns every key and query by it): one rule, one message.
  posenc::KvCacheOptions o;
  o.n_kv_heads = 2;
  o.head_dim = 8;
  o.capacity = 4;
  const std::vector<double> inv_freq = {1.0, 0.1, 0.01, 0.001};
  o.rope_inv_freq = inv_freq.data();
  o.rope_rot_dim = 8;
  std::unique_ptr<posenc::KvCache> c;
  REQUIRE(posenc::KvCache::create(o, &c).ok());
  std::vector<posenc::KvCacheOptions> cases(6, o);
  cases[0].rope_rot_dim = 0;
  cases[1].rope_rot_dim = 3;                           // odd
  cases[2].rope_rot_dim = 10;                          // > head_dim
  cases[3].rope.rot_offset = 2;                        // rot_offset + rot_dim > head_dim
  cases[4].rope.precision = posenc::Precision::kGgml;  // without its parameters
  cases[5].rope.attention_factor = std::nan("");
  for (const posenc::KvCacheOptions& bad : cases) {
    const posenc::Status rule =
        posenc::apply_rope_check(bad.capacity, bad.n_kv_heads, bad.head_dim, bad.rope_rot_dim, 0.0, bad.rope);
    REQUIRE(!rule.ok());
    const posenc::Status made = posenc::KvCache::create(bad, &c);
    CHECK(made.code == rule.code);
    CHECK(std::string(made.message) == rule.message);
    CHECK(!c);
  }
  CHECK(std::string(posenc::KvCache::create(cases[1], &c).message) == "rot_dim must be even");
  // Its frequencies: finite, as apply_rope says (checked before it turns anything).
  const std::vector<double> nan_freq = {1.0, std::nan(""), 0.01, 0.001};
  std::vector<float> x(o.n_kv_heads * o.head_dim, 1.0f);
  o.rope_inv_freq = nan_freq.data();
  const posenc::Status made = posenc::KvCache::create(o, &c);
  CHECK(made.code == posenc::StatusCode::kBadArgument);
  CHECK(std::string(made.message) ==
        posenc::apply_rope(x.data(), 1, o.n_kv_heads, o.head_dim, nan_freq.data(), 8, nullptr, 0.0).message);
}

TEST_CASE("kv cache: create_check gives create's rules without the tables, each with create's own message") {
  // The JS layer asks create_check before it allocates: its message must be create's.
  posenc::KvCacheOptions good;
  good.n_kv_heads = 2;
  good.head_dim = 4;
  good.capacity = 8;
  CHECK(posenc::KvCache::create_check(good).ok());
  std::vector<posenc::KvCacheOptions> cases(6, good);
  cases[0].n_kv_heads = 0;
  cases[1].head_dim = 0;
  cases[2].capacity = 0;
  cases[3].sink_tokens = 1;  // without a window
  cases[4].window = 8;
  cases[4].sink_tokens = 1;                                         // capacity < sink_tokens + window
  cases[5].capacity = std::numeric_limits<std::size_t>::max() / 2;  // · 2 · 4 values: past memory, 32 or 64 bits
  for (const posenc::KvCacheOptions& o : cases) {
    const posenc::Status checked = posenc::KvCache::create_check(o);
    CHECK(!checked.ok());
    std::unique_ptr<posenc::KvCache> c;
    const posenc::Status made = posenc::KvCache::create(o, &c);
    CHECK(made.code == checked.code);
    CHECK(std::string(made.message) == checked.message);
    CHECK(!c);
  }
  CHECK(posenc::KvCache::create_check(cases[5]).code == posenc::StatusCode::kTooLarge);
  CHECK(std::string(posenc::KvCache::create_check(cases[0]).message) == "n_kv_heads must be > 0");
}
