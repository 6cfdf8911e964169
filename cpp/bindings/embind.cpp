// Embind adapters: convert, check, call, convert back. The JS layer (api.js) has already checked
// every argument with the user's names; a C++ status still becomes a RangeError here, never a
// C++ exception (Emscripten 3.1.6 would deliver that to JS as a bare number).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"

namespace {

using emscripten::val;

[[noreturn]] void throw_status(const char* fn, const posenc::Status& s) {
  val::global("RangeError").new_(std::string("posenc.") + fn + ": " + s.message).throw_();
  __builtin_unreachable();
}

// A fresh JS-owned Float32Array copy of v (no view into the heap survives the call).
val to_float32_array(const std::vector<float>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

val sinusoidal(std::uint32_t seq_len, std::uint32_t d_model, double base) {
  std::vector<float> out(std::size_t{seq_len} * d_model);
  const auto s = posenc::sinusoidal(out.data(), seq_len, d_model, {base});
  if (!s.ok()) throw_status("sinusoidal", s);
  return to_float32_array(out);
}

std::string simd_arch() { return posenc::simd_arch(); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  emscripten::function("simdArch", &simd_arch);
  emscripten::function("sinusoidal", &sinusoidal);
}
