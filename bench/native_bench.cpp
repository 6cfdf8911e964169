// Native kernels under Google Benchmark (Debian's libbenchmark-dev): the same ops and sizes as
// `npm run bench`. The SIMD target is the best this CPU runs, or $POSENC_SIMD (bench/run.mjs runs
// this binary once per target and compares with onnxruntime-node in the same session).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

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

void RopeHalfSplit(benchmark::State& state) {
  const auto seq_len = static_cast<std::size_t>(state.range(0));
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

void CausalAttention(benchmark::State& state) {
  const auto seq_len = static_cast<std::size_t>(state.range(0));
  const bool alibi = state.range(1) != 0;
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

}  // namespace

BENCHMARK(Sinusoidal)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(RopeHalfSplit)->Arg(128)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(CausalAttention)->Args({128, 0})->Args({512, 0})->Args({1024, 0})->Args({1024, 1})->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("posenc_simd", posenc::simd_arch());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
