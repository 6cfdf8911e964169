// Measured limits for the benchmark table, built to a tiny separate WASM module (SIMD128):
//   copy_bytes: memcpy inside the WASM heap (the engine's bulk memory copy) — the floor for any op
//               that reads and writes its data;
//   simd_pass:  one f32x4 load, add and store per 16 bytes — the same traffic through SIMD
//               registers, the floor for an op that must touch every value (x + 0 keeps the loop);
//   simd_read:  f32x4 loads summed into four accumulators, nothing stored — the floor for an op
//               that only reads its data (a decoding step reading a KV cache);
//   madd_loop:  register-only multiply-add on f32x4 (independent chains, no memory traffic) —
//               the arithmetic ceiling; returns a value so the loop is not optimized away.
#include <emscripten/bind.h>
#include <wasm_simd128.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

std::uintptr_t alloc_bytes(double n) {
  return reinterpret_cast<std::uintptr_t>(std::malloc(static_cast<std::size_t>(n)));
}
void free_bytes(std::uintptr_t p) { std::free(reinterpret_cast<void*>(p)); }
void copy_bytes(std::uintptr_t dst, std::uintptr_t src, double n) {
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), static_cast<std::size_t>(n));
}

void simd_pass(std::uintptr_t dst, std::uintptr_t src, double bytes) {
  auto* d = reinterpret_cast<float*>(dst);
  const auto* s = reinterpret_cast<const float*>(src);
  const v128_t zero = wasm_f32x4_splat(0.0f);
  for (std::size_t i = 0, n = static_cast<std::size_t>(bytes) / 4; i + 4 <= n; i += 4)
    wasm_v128_store(d + i, wasm_f32x4_add(wasm_v128_load(s + i), zero));
}

float simd_read(std::uintptr_t src, double bytes) {
  const auto* s = reinterpret_cast<const float*>(src);
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0, n = static_cast<std::size_t>(bytes) / 4; i + 16 <= n; i += 16) {
    a0 = wasm_f32x4_add(a0, wasm_v128_load(s + i));
    a1 = wasm_f32x4_add(a1, wasm_v128_load(s + i + 4));
    a2 = wasm_f32x4_add(a2, wasm_v128_load(s + i + 8));
    a3 = wasm_f32x4_add(a3, wasm_v128_load(s + i + 12));
  }
  return wasm_f32x4_extract_lane(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)), 0);
}

// 4 multiply chains and 4 add chains, independent, so neither latency nor a dependent mul → add
// pair limits the rate, and few enough to stay in registers: 8 f32x4 operations (32 flops) per
// iteration.
float madd_loop(double iterations) {
  const v128_t m = wasm_f32x4_splat(0.999999f), a = wasm_f32x4_splat(1e-7f);
  v128_t p0 = wasm_f32x4_splat(1.0f), p1 = p0, p2 = p0, p3 = p0;
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  for (std::uint32_t i = 0, n = static_cast<std::uint32_t>(iterations); i < n; ++i) {
    p0 = wasm_f32x4_mul(p0, m);
    s0 = wasm_f32x4_add(s0, a);
    p1 = wasm_f32x4_mul(p1, m);
    s1 = wasm_f32x4_add(s1, a);
    p2 = wasm_f32x4_mul(p2, m);
    s2 = wasm_f32x4_add(s2, a);
    p3 = wasm_f32x4_mul(p3, m);
    s3 = wasm_f32x4_add(s3, a);
  }
  const v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(p0, p1), wasm_f32x4_add(p2, p3)),
                                  wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)));
  return wasm_f32x4_extract_lane(s, 0);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_bench_limits) {
  emscripten::function("allocBytes", &alloc_bytes);
  emscripten::function("freeBytes", &free_bytes);
  emscripten::function("copyBytes", &copy_bytes);
  emscripten::function("simdPass", &simd_pass);
  emscripten::function("simdRead", &simd_read);
  emscripten::function("maddLoop", &madd_loop);
}
