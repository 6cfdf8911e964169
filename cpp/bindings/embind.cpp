// Embind adapters: convert, call, convert back. Tensors travel as heap addresses (the JS layer
// allocates and copies with heapAlloc/heapFree); every function returns the C++ status message,
// "" for success, which the JS layer turns into a RangeError. No C++ exception ever crosses into
// JS (Emscripten 3.1.6 would deliver it as a bare number).
//
// This unit holds the heap, threads, names and status calls; each part of the API has its own
// embind_<part>.cpp beside its js/<part>.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

Ptr heap_alloc(double bytes) {
  if (!(bytes >= 0 && bytes <= 4294967295.0)) return 0;
  return reinterpret_cast<Ptr>(std::malloc(bytes == 0 ? 1 : static_cast<std::size_t>(bytes)));
}
void heap_free(Ptr p) { std::free(at<void>(p)); }

// Bytes allocated and not freed in the WASM heap (dlmalloc's count), for leak checks.
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

std::string simd_arch() { return posenc::simd_arch(); }

// The kernels' thread pool (threads.hpp); in the threaded build the Emscripten pool holds n - 1 workers.
std::string set_num_threads(double n) {
  if (!(n >= 1 && n <= 64 && n == static_cast<int>(n)))
    return message({posenc::StatusCode::kBadArgument, "n_threads must be in [1, 64]"});
  return message(posenc::set_num_threads(static_cast<int>(n)));
}
double num_threads() { return posenc::num_threads(); }
// The names every enum takes, in enum order (the JS layer builds its checks from them).
val names() {
  auto list = [](int n, auto name) {
    val a = val::array();
    for (int k = 0; k < n; ++k) a.call<void>("push", std::string(name(k)));
    return a;
  };
  val out = val::object();
  out.set("ropeScalings", list(posenc::kNumRopeScalings,
                               [](int k) { return posenc::rope_scaling_name(static_cast<posenc::RopeScaling>(k)); }));
  out.set("ropeLayouts", list(posenc::kNumRopeLayouts,
                              [](int k) { return posenc::rope_layout_name(static_cast<posenc::RopeLayout>(k)); }));
  out.set("precisions", list(posenc::kNumPrecisions,
                             [](int k) { return posenc::precision_name(static_cast<posenc::Precision>(k)); }));
  return out;
}

// The code of the last failed status a call returned: "bad_shape", "too_large", ...
std::string last_status_code() { return posenc::status_code_name(posenc_js::last_status_code()); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using emscripten::function;
  function("simdArch", &simd_arch);
  function("lastStatusCode", &last_status_code);
  function("names", &names);
  function("setNumThreads", &set_num_threads);
  function("numThreads", &num_threads);
  function("heapAlloc", &heap_alloc);
  function("heapFree", &heap_free);
  function("heapInUse", &heap_in_use);
}
