// Native kernels under Google Benchmark (Debian's libbenchmark-dev): the same ops and sizes as
// `npm run bench`. The SIMD target is the best this CPU runs, or $POSENC_SIMD (bench/run.mjs runs
// this binary once per target and compares with onnxruntime-node in the same session).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/lab.hpp"
#include "posenc/posenc.hpp"

namespace {

std::vector<float> data(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  std::uint32_t a = seed;
  for (auto& e : v) {
    a = a * 1664525u + 1013904223u;
    e = static_cast<float>(a >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

void Sinusoidal(benchmark::State& state) {
  const auto seq_len = static_cast<std::size_t>(state.range(0));
  std::vector<float> out(seq_len * 128);
  for (auto _ : state) {
    posenc::sinusoidal(out.data(), seq_len, 128);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size() * sizeof(float)));
}

// RopeHalfSplit/seq_len on the calling thread; RopeHalfSplitThreads/seq_len/n_threads in real time.
void rope_half_split(benchmark::State& state, std::size_t seq_len) {
  const std::size_t n_heads = 32, head_dim = 128;
  auto x = data(seq_len * n_heads * head_dim, 1);
  posenc::RopeParams p;
  p.head_dim = head_dim;
  std::vector<double> inv(64);
  double af;
  posenc::rope_frequencies(p, 0, inv.data(), inv.size(), &af);
  for (auto _ : state) {
    posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, inv.data(), head_dim, nullptr, 0.0);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * x.size() * sizeof(float)));
}

void RopeHalfSplit(benchmark::State& state) { rope_half_split(state, static_cast<std::size_t>(state.range(0))); }

void RopeHalfSplitThreads(benchmark::State& state) {
  if (!posenc::set_num_threads(static_cast<int>(state.range(1))).ok()) {
    state.SkipWithError("set_num_threads failed");
    return;
  }
  rope_half_split(state, static_cast<std::size_t>(state.range(0)));
  posenc::set_num_threads(1);
}

// CausalAttention/seq_len/alibi on the calling thread; CausalAttentionThreads/seq_len/n_threads
// (no ALiBi) with set_num_threads(n_threads), timed in real time.
void causal_attention(benchmark::State& state, std::size_t seq_len, bool alibi) {
  const std::size_t n_heads = 8, head_dim = 64;
  const auto q = data(seq_len * n_heads * head_dim, 2), k = data(seq_len * n_heads * head_dim, 3),
             v = data(seq_len * n_heads * head_dim, 4);
  std::vector<float> out(q.size()), slopes(n_heads);
  posenc::alibi_slopes(slopes.data(), n_heads);
  posenc::AttentionOptions o;
  o.n_heads = n_heads;
  o.head_dim = head_dim;
  o.causal = true;
  if (alibi) o.alibi_slopes = slopes.data();
  for (auto _ : state) {
    posenc::attention(q.data(), k.data(), v.data(), seq_len, seq_len, o, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 2.0 * 2.0 * n_heads * head_dim * (static_cast<double>(seq_len) * (seq_len + 1) / 2);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void CausalAttention(benchmark::State& state) {
  causal_attention(state, static_cast<std::size_t>(state.range(0)), state.range(1) != 0);
}

void CausalAttentionThreads(benchmark::State& state) {
  if (!posenc::set_num_threads(static_cast<int>(state.range(1))).ok()) {
    state.SkipWithError("set_num_threads failed");
    return;
  }
  causal_attention(state, static_cast<std::size_t>(state.range(0)), false);
  posenc::set_num_threads(1);
}

// CausalAttentionHalf/seq_len/float16: K and V as float16 bits (kv_dtype kFloat16) or, for 0, as
// float32 holding the same values (the widening is exact, so both give the same output).
void CausalAttentionHalf(benchmark::State& state) {
  const auto seq_len = static_cast<std::size_t>(state.range(0));
  const bool half = state.range(1) != 0;
  const std::size_t n_heads = 8, head_dim = 64, n = seq_len * n_heads * head_dim;
  const auto q = data(n, 2), k = data(n, 3), v = data(n, 4);
  // data() is in [-1, 1) in steps of 2^-23: round to float16 (|x| < 2^-14 flushes to zero, and
  // rounding up to 1.0 is kept), then both calls read exactly those values.
  auto to_half = [](float x) {
    const float a = std::fabs(x);
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m · 2^e, m in [0.5, 1)
    std::uint16_t bits = 0;
    if (a >= 0x1p-14f) {
      const auto mant = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(m, 11)));  // 1024 … 2048
      bits = static_cast<std::uint16_t>(((static_cast<std::uint32_t>(e + 14) << 10) + (mant - 1024)));
    }
    return static_cast<std::uint16_t>(bits | (x < 0 ? 0x8000u : 0u));
  };
  auto value = [](std::uint16_t b) {
    const int e = (b >> 10) & 0x1f;
    const float mag = e == 0 ? 0.0f : std::ldexp(1.0f + static_cast<float>(b & 0x3ff) / 1024.0f, e - 15);
    return b & 0x8000 ? -mag : mag;
  };
  std::vector<std::uint16_t> k16(n), v16(n);
  std::vector<float> k32(n), v32(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    k16[i] = to_half(k[i]);
    v16[i] = to_half(v[i]);
    k32[i] = value(k16[i]);
    v32[i] = value(v16[i]);
  }
  posenc::AttentionOptions o;
  o.n_heads = n_heads;
  o.head_dim = head_dim;
  o.causal = true;
  if (half) o.kv_dtype = posenc::DType::kFloat16;
  const void* kp = half ? static_cast<const void*>(k16.data()) : k32.data();
  const void* vp = half ? static_cast<const void*>(v16.data()) : v32.data();
  for (auto _ : state) {
    posenc::attention(q.data(), kp, vp, seq_len, seq_len, o, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 2.0 * 2.0 * n_heads * head_dim * (static_cast<double>(seq_len) * (seq_len + 1) / 2);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// One lab training step (forward, backward, clip, AdamW) of the default model (docs/lab.md "The model
// card": vocab 32, d_model 64, 2 layers, 4 heads, rope) on a markov batch [16][64] — the native
// row of bench/lab.mjs. GFLOPS counts the matrix products as labStepFlops() in bench/lab.mjs does.
// LabTrainStep on the calling thread; LabTrainStepThreads/n_threads, the same step split over the
// pool (set_num_threads), in real time.
void LabTrainStep(benchmark::State& state) {
  namespace lab = posenc::lab;
  const std::size_t batch = 16, seq_len = 64;
  std::unique_ptr<lab::Dataset> data;
  lab::Dataset::create(lab::DatasetConfig{lab::Task::kMarkov, 32, 1}, &data);
  std::vector<std::int32_t> tokens(batch * seq_len);
  data->sample(tokens.data(), batch, seq_len, 0);
  lab::ModelConfig c;
  c.scheme = lab::Scheme::kRope;
  std::unique_ptr<lab::Model> model;
  if (!lab::Model::create(c, &model).ok()) {
    state.SkipWithError("Model::create failed");
    return;
  }
  float loss = 0.0f;
  for (auto _ : state) {
    model->train_step(tokens.data(), batch, seq_len, 1e-3, &loss);
    benchmark::DoNotOptimize(loss);
  }
  const double R = batch * seq_len, d = c.d_model, T = seq_len, V = c.vocab_size, L = c.n_layers;
  const double flops = 3.0 * (L * (24.0 * R * d * d + 4.0 * batch * T * T * d) + 2.0 * R * d * V);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void LabTrainStepThreads(benchmark::State& state) {
  if (!posenc::set_num_threads(static_cast<int>(state.range(0))).ok()) {
    state.SkipWithError("set_num_threads failed");
    return;
  }
  LabTrainStep(state);
  posenc::set_num_threads(1);
}

}  // namespace

BENCHMARK(LabTrainStep)->Unit(benchmark::kMillisecond);
BENCHMARK(LabTrainStepThreads)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(Sinusoidal)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(RopeHalfSplit)->Arg(128)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(RopeHalfSplitThreads)->Args({2048, 1})->Args({2048, 2})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(CausalAttention)
    ->Args({128, 0})
    ->Args({512, 0})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(CausalAttentionHalf)->Args({4096, 1})->Args({4096, 0})->Unit(benchmark::kMillisecond);
BENCHMARK(CausalAttentionThreads)->Args({1024, 1})->Args({1024, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("posenc_simd", posenc::simd_arch());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
