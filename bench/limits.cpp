// Measured limits for the benchmark table, built to a tiny separate WASM module (SIMD128):
//   copy_bytes: memcpy inside the WASM heap — the floor for any op that reads and writes its data;
//   madd_loop:  register-only multiply-add on f32x4 (8 independent chains, no memory traffic) —
//               the arithmetic ceiling; returns a value so the loop is not optimized away.
#include <emscripten/bind.h>
#include <wasm_simd128.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

std::uintptr_t alloc_bytes(double n) { return reinterpret_cast<std::uintptr_t>(std::malloc(static_cast<std::size_t>(n))); }
void free_bytes(std::uintptr_t p) { std::free(reinterpret_cast<void*>(p)); }
void copy_bytes(std::uintptr_t dst, std::uintptr_t src, double n) {
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), static_cast<std::size_t>(n));
}

float madd_loop(double iterations) {
  const v128_t m = wasm_f32x4_splat(0.999999f), a = wasm_f32x4_splat(1e-7f);
  v128_t c0 = wasm_f32x4_splat(1.0f), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (double i = 0; i < iterations; ++i) {
    c0 = wasm_f32x4_add(wasm_f32x4_mul(c0, m), a); c1 = wasm_f32x4_add(wasm_f32x4_mul(c1, m), a);
    c2 = wasm_f32x4_add(wasm_f32x4_mul(c2, m), a); c3 = wasm_f32x4_add(wasm_f32x4_mul(c3, m), a);
    c4 = wasm_f32x4_add(wasm_f32x4_mul(c4, m), a); c5 = wasm_f32x4_add(wasm_f32x4_mul(c5, m), a);
    c6 = wasm_f32x4_add(wasm_f32x4_mul(c6, m), a); c7 = wasm_f32x4_add(wasm_f32x4_mul(c7, m), a);
  }
  const v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(c0, c1), wasm_f32x4_add(c2, c3)),
                                  wasm_f32x4_add(wasm_f32x4_add(c4, c5), wasm_f32x4_add(c6, c7)));
  return wasm_f32x4_extract_lane(s, 0);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_bench_limits) {
  emscripten::function("allocBytes", &alloc_bytes);
  emscripten::function("freeBytes", &free_bytes);
  emscripten::function("copyBytes", &copy_bytes);
  emscripten::function("maddLoop", &madd_loop);
}
