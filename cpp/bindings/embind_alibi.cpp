// ALiBi's adapters (js/alibi.js): slopes and biases; and its parts of readModel's result and of the
// attention options (SchemePart, embind_options.hpp).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;
using posenc_js::query_offset;

// max_bias's rule (alibi_check), which the JS layer asks before it allocates.
std::string alibi_check(double max_bias) { return message(posenc::alibi_check(max_bias)); }

std::string alibi_slopes(Ptr slopes, double n_heads, double max_bias) {
  return message(posenc::alibi_slopes(at<float>(slopes), static_cast<std::size_t>(n_heads), max_bias));
}

std::string alibi_bias(Ptr bias, double n_heads, double q_len, double k_len, bool causal, double max_bias,
                       double q_offset) {
  return message(posenc::alibi_bias(at<float>(bias), static_cast<std::size_t>(n_heads), static_cast<std::size_t>(q_len),
                                    static_cast<std::size_t>(k_len), causal, max_bias, query_offset(q_offset)));
}

// readModel's `alibi`; attention's alibiSlopes (an address, 0 = off; js/alibi.js's term writes it).
const posenc_js::AddSchemePart kAlibi({
    [](const posenc::ModelInfo& m, val& out) {
      if (!m.alibi) return;
      val a = val::object();
      a.set("nHeads", m.alibi->n_heads);
      a.set("maxBias", m.alibi->max_bias);
      out.set("alibi", a);
    },
    [](const val& o, posenc::PositionBias& b) { b.alibi_slopes = at<const float>(o["alibiSlopes"].as<Ptr>()); },
});

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_alibi) {
  using emscripten::function;
  function("alibiCheck", &alibi_check);
  function("alibiSlopes", &alibi_slopes);
  function("alibiBias", &alibi_bias);
}
