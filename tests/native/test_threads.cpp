// The thread pool (set_num_threads, parallel_for) and the kernels split over it: every task runs
// once, nothing deadlocks, and attention and RoPE give bitwise the 1-thread result on 2 and 3.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "helpers.hpp"
#include "posenc/posenc.hpp"
#include "subsets.hpp"
#include "thread_pool.hpp"

using posenc::test::random_floats;

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)

// WebAssembly without -pthread (the wasm-release suite): one thread, and a clear refusal of more.
TEST_CASE("threads: a build without threads refuses n_threads > 1 and stays at 1" * kKernels) {
  CHECK(posenc::set_num_threads(1).ok());
  const posenc::Status s = posenc::set_num_threads(2);
  CHECK(s.code == posenc::StatusCode::kBadArgument);
  CHECK(std::string(s.message) == "n_threads > 1 needs the threaded build (posenc was compiled without threads)");
  CHECK(posenc::num_threads() == 1);
}

#else

namespace {

// The threaded WASM suite runs with a pool of 6 Web Workers made at load (CMakeLists.txt; a thread
// beyond it cannot start while the main thread waits): counts stay within it there.
#ifdef __EMSCRIPTEN__
constexpr int kMaxThreads = 4;
#else
constexpr int kMaxThreads = 64;
#endif

// Puts the thread count back as the test found it (1, or --posenc-threads' N).
struct KeepThreads {
  int n = posenc::num_threads();
  ~KeepThreads() { posenc::set_num_threads(n); }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// run() computes into fresh outputs (several concatenated); 2 and 3 threads must match 1 bit for bit.
void check_thread_invariant(const std::function<std::vector<float>()>& run) {
  KeepThreads keep;
  REQUIRE(posenc::set_num_threads(1).ok());
  const std::vector<float> one = run();
  for (const int n : {2, 3}) {
    REQUIRE(posenc::set_num_threads(n).ok());
    CAPTURE(n);
    CHECK(same_bits(run(), one));
  }
}

std::vector<std::uint16_t> random_halves(std::size_t n, unsigned seed) {
  std::vector<std::uint16_t> h(n);
  std::uint32_t a = seed;
  for (auto& e : h) {
    a = a * 1664525u + 1013904223u;
    e = static_cast<std::uint16_t>(((a >> 16) & 0x8000u) | ((13u + (a >> 20) % 3) << 10) | ((a >> 8) & 0x3ffu));
  }
  return h;
}

posenc::TensorRef tensor(const void* data, posenc::DType dtype, std::initializer_list<std::int64_t> dims) {
  posenc::TensorRef r;
  r.data = data;
  r.dtype = dtype;
  r.rank = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), r.dims);
  return r;
}

}  // namespace

TEST_CASE("threads: set_num_threads takes 1 … 64 and num_threads reports it" * kKernels) {
  KeepThreads keep;
  for (const int bad : {0, -1, 65, 1000}) {
    const posenc::Status s = posenc::set_num_threads(bad);
    CAPTURE(bad);
    CHECK(s.code == posenc::StatusCode::kBadArgument);
    CHECK(std::string(s.message) == "n_threads must be in [1, 64]");
  }
  for (const int n : {1, 2, 3, 8, 64, 3, 1}) {
    if (n > kMaxThreads) continue;
    REQUIRE(posenc::set_num_threads(n).ok());
    CHECK(posenc::num_threads() == n);
    CHECK(posenc::pool::pool_workers() == static_cast<std::size_t>(n));
  }
  REQUIRE(posenc::set_num_threads(2).ok());
  CHECK(posenc::set_num_threads(65).code == posenc::StatusCode::kBadArgument);
  CHECK(posenc::num_threads() == 2);  // a refused count leaves the pool as it was
}

TEST_CASE("threads: parallel_for runs every task exactly once, on workers below n_workers" * kKernels) {
  KeepThreads keep;
  for (const int n : {1, 2, 3, 8}) {
    if (n > kMaxThreads) continue;
    REQUIRE(posenc::set_num_threads(n).ok());
    for (const std::size_t n_tasks : {0u, 1u, 7u, 1000u}) {
      const std::size_t n_workers = posenc::pool::pool_workers();
      std::vector<std::atomic<int> > runs(n_tasks);
      std::atomic<bool> worker_in_range{true};
      posenc::pool::parallel_for(n_tasks, n_workers, [&](std::size_t task, std::size_t worker) {
        runs[task].fetch_add(1);
        if (worker >= n_workers) worker_in_range = false;
      });
      CAPTURE(n);
      CAPTURE(n_tasks);
      bool once = true;
      for (const auto& r : runs) once = once && r.load() == 1;
      CHECK(once);
      CHECK(worker_in_range.load());
    }
  }
}

TEST_CASE("threads: nested and concurrent parallel_for run inline instead of deadlocking" * kKernels) {
  KeepThreads keep;
  REQUIRE(posenc::set_num_threads(3).ok());
  std::atomic<int> inner{0};
  posenc::pool::parallel_for(16, 3, [&](std::size_t, std::size_t) {
    posenc::pool::parallel_for(16, 3, [&](std::size_t, std::size_t worker) {
      if (worker == 0) inner.fetch_add(1);  // a nested call runs on its caller alone, as worker 0
    });
  });
  CHECK(inner.load() == 16 * 16);

  // Two user threads share the pool, while a third resizes it: every task still runs once.
  std::atomic<long> total{0};
  auto user = [&] {
    for (int round = 0; round < 200; ++round) {
      const std::size_t n_workers = posenc::pool::pool_workers();
      posenc::pool::parallel_for(50, n_workers, [&](std::size_t, std::size_t worker) {
        if (worker < n_workers) total.fetch_add(1);
      });
    }
  };
  std::thread a(user), b(user);
  for (int k = 0; k < 20; ++k) REQUIRE(posenc::set_num_threads(2 + k % 3).ok());
  a.join();
  b.join();
  CHECK(total.load() == 2L * 200 * 50);
}

TEST_CASE("threads: fused attention is bitwise the same on 1, 2 and 3 threads" * kKernels) {
  const std::size_t H = 8, D = 64, S = 200;
  const auto q = random_floats(S * H * D, 11), k = random_floats(S * H * D, 12), v = random_floats(S * H * D, 13);
  const auto k16 = random_halves(S * H * D, 14), v16 = random_halves(S * H * D, 15);
  std::vector<float> slopes(H), table(32 * H);
  posenc::alibi_slopes(slopes.data(), H);
  for (std::size_t t = 0; t < table.size(); ++t) table[t] = 0.1f * float(t % 17) - 0.8f;
  const auto bias = random_floats(H * S * S, 16);
  const auto sinks = random_floats(H, 17);
  std::vector<double> inv(D / 2);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(D));
  for (int variant = 0; variant < 13; ++variant) {
    posenc::AttentionOptions o;
    o.n_heads = H;
    o.head_dim = D;
    o.causal = variant != 1;
    std::size_t q_len = S, kv_len = S;
    bool weights = false, half = false;
    switch (variant) {
      case 2: o.n_kv_heads = 2; break;  // GQA
      case 3:
        q_len = 70;
        o.n_kv_heads = 4;
        break;  // decode a block after a past
      case 4:
        o.window = 50;
        o.sink_tokens = 4;
        o.sinks = sinks.data();
        break;
      case 5: o.chunk_size = 64; break;
      case 6: o.alibi_slopes = slopes.data(); break;
      case 7:
        o.t5_table = table.data();
        o.t5 = {true, 32, 128};
        o.causal = false;
        break;
      case 8:
        o.bias = bias.data();
        o.bias_per_head = true;
        o.softcap = 2.0;
        break;
      case 9:
        half = true;
        o.kv_dtype = posenc::DType::kFloat16;
        o.n_kv_heads = 2;
        break;
      case 10:
        weights = true;
        o.n_kv_heads = 4;
        break;  // every score kept
      case 11:
        weights = true;
        half = true;
        o.kv_dtype = posenc::DType::kFloat16;
        break;
      case 12:
        o.heads_major = true;
        o.rope_inv_freq = inv.data();
        o.rope_rot_dim = D;
        o.temperature = posenc::AttentionOptions::Temperature{};  // not emplace(): clang 14 rejects it here
        break;
      default: break;
    }
    CAPTURE(variant);
    check_thread_invariant([&] {
      std::vector<float> out(q_len * H * D), w(weights ? H * q_len * kv_len : 0);
      const void* kp = half ? static_cast<const void*>(k16.data()) : k.data();
      const void* vp = half ? static_cast<const void*>(v16.data()) : v.data();
      REQUIRE(posenc::attention(q.data(), kp, vp, q_len, kv_len, o, out.data(), weights ? w.data() : nullptr).ok());
      out.insert(out.end(), w.begin(), w.end());
      return out;
    });
  }
}

TEST_CASE("threads: onnx_attention is bitwise the same on 1, 2 and 3 threads" * kKernels) {
  using posenc::DType;
  const std::int64_t B = 2, Hq = 8, Hkv = 4, Sq = 70, P = 130, T = P + Sq, D = 64;
  const auto q = random_floats(B * Hq * Sq * D, 21), k = random_floats(B * Hkv * Sq * D, 22),
             v = random_floats(B * Hkv * Sq * D, 23), pk = random_floats(B * Hkv * P * D, 24),
             pv = random_floats(B * Hkv * P * D, 25), mask = random_floats(Sq * T, 26);
  std::vector<std::uint8_t> mask_b(B * Sq * T);
  for (std::size_t e = 0; e < mask_b.size(); ++e) mask_b[e] = e % 7 != 3;
  const std::vector<std::int64_t> nonpad = {Sq, Sq - 20};
  for (int variant = 0; variant < 5; ++variant) {
    posenc::AttentionInputs in;
    posenc::AttentionAttrs a;
    bool qk = false;
    if (variant == 0 || variant == 1) {  // 4D with a past, causal (and its scores)
      in.q = tensor(q.data(), DType::kFloat32, {B, Hq, Sq, D});
      in.k = tensor(k.data(), DType::kFloat32, {B, Hkv, Sq, D});
      in.v = tensor(v.data(), DType::kFloat32, {B, Hkv, Sq, D});
      in.past_key = tensor(pk.data(), DType::kFloat32, {B, Hkv, P, D});
      in.past_value = tensor(pv.data(), DType::kFloat32, {B, Hkv, P, D});
      a.is_causal = 1;
      qk = variant == 1;
      a.qk_matmul_output_mode = 3;
    } else {  // 3D, no past: keys are the Sq new ones
      in.q = tensor(q.data(), DType::kFloat32, {B, Sq, Hq * D});
      in.k = tensor(k.data(), DType::kFloat32, {B, Sq, Hkv * D});
      in.v = tensor(v.data(), DType::kFloat32, {B, Sq, Hkv * D});
      a.q_num_heads = Hq;
      a.kv_num_heads = Hkv;
      if (variant == 2) in.attn_mask = tensor(mask.data(), DType::kFloat32, {Sq, Sq});  // broadcast over B, H
      if (variant == 3) in.attn_mask = tensor(mask_b.data(), DType::kBool, {B, 1, Sq, Sq});
      if (variant == 4) {
        in.nonpad_kv_seqlen = tensor(nonpad.data(), DType::kInt64, {B});
        a.softcap = 3.0;
        qk = true;
        a.qk_matmul_output_mode = 1;
      }
    }
    posenc::AttentionShapes shapes;
    REQUIRE(posenc::onnx_attention_shapes(in, a, &shapes).ok());
    CAPTURE(variant);
    check_thread_invariant([&] {
      const std::int64_t* s = shapes.qk_matmul_output;
      std::vector<float> y(B * Hq * Sq * D), present_k(B * Hkv * T * D), w(qk ? s[0] * s[1] * s[2] * s[3] : 0);
      REQUIRE(posenc::onnx_attention(in, a, y.data(), present_k.data(), nullptr, qk ? w.data() : nullptr).ok());
      y.insert(y.end(), w.begin(), w.end());
      y.insert(y.end(), present_k.begin(), present_k.end());
      return y;
    });
  }
}

TEST_CASE("threads: apply_rope, apply_rope_rows and onnx_rotary_embedding are bitwise the same on 1, 2 and 3 threads" *
          kKernels) {
  const std::size_t S = 1000, H = 8, D = 64;
  const auto x = random_floats(S * H * D, 31, 2.0f);
  std::vector<double> inv(D / 2), pos(3 * S);
  for (std::size_t i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * double(i) / double(D));
  for (std::size_t t = 0; t < pos.size(); ++t) pos[t] = double((t * 37) % 5000);
  std::vector<std::uint8_t> pair_row(D / 2);
  const std::size_t section[3] = {16, 8, 8};
  REQUIRE(posenc::mrope_pair_rows(section, 3, false, D / 2, pair_row.data()).ok());
  for (const auto layout : {posenc::RopeLayout::kHalfSplit, posenc::RopeLayout::kInterleaved}) {
    for (const auto precision : {posenc::Precision::kFast, posenc::Precision::kAccurate}) {
      const posenc::RopeApplyOptions o{layout, precision, 1.0};
      check_thread_invariant([&] {
        std::vector<float> a = x, b = x;
        REQUIRE(posenc::apply_rope(a.data(), S, H, D, inv.data(), D - 16, nullptr, 3.0, o).ok());
        REQUIRE(posenc::apply_rope_rows(b.data(), S, H, D, inv.data(), D, pos.data(), 3, pair_row.data(), o).ok());
        a.insert(a.end(), b.begin(), b.end());
        return a;
      });
    }
  }

  using posenc::DType;
  const std::int64_t B = 2, OH = 8, OS = 300, OD = 64, rd = 48, max_pos = 4096;
  const auto ox = random_floats(B * OH * OS * OD, 32);
  const auto cos = random_floats(max_pos * rd / 2, 33), sin = random_floats(max_pos * rd / 2, 34);
  std::vector<std::int64_t> ids(B * OS);
  for (std::size_t t = 0; t < ids.size(); ++t) ids[t] = static_cast<std::int64_t>((t * 131) % max_pos);
  for (const int rank : {3, 4}) {
    for (const int interleaved : {0, 1}) {
      posenc::RotaryEmbeddingAttrs a;
      a.interleaved = interleaved;
      a.rotary_embedding_dim = rd;
      a.num_heads = OH;
      const posenc::TensorRef xr = rank == 4 ? tensor(ox.data(), DType::kFloat32, {B, OH, OS, OD})
                                             : tensor(ox.data(), DType::kFloat32, {B, OS, OH * OD});
      const auto cr = tensor(cos.data(), DType::kFloat32, {max_pos, rd / 2}),
                 sr = tensor(sin.data(), DType::kFloat32, {max_pos, rd / 2}),
                 pr = tensor(ids.data(), DType::kInt64, {B, OS});
      CAPTURE(rank);
      CAPTURE(interleaved);
      check_thread_invariant([&] {
        std::vector<float> y(ox.size());
        REQUIRE(posenc::onnx_rotary_embedding(xr, cr, sr, pr, a, y.data()).ok());
        return y;
      });
    }
  }
}

#ifdef __EMSCRIPTEN__
TEST_CASE("threads: beyond the WASM pool, set_num_threads fails cleanly and keeps the count" * kKernels) {
  KeepThreads keep;
  REQUIRE(posenc::set_num_threads(2).ok());
  const posenc::Status s = posenc::set_num_threads(64);  // 63 workers: the pool has 6
  CHECK(s.code == posenc::StatusCode::kUnavailable);
  CHECK(posenc::num_threads() == 2);
  CHECK(posenc::set_num_threads(3).ok());
}
#endif

#endif  // threads available
