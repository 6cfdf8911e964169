// Sinusoidal's adapters (js/sinusoidal.js).
#include <emscripten/bind.h>

#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

posenc::SinusoidalParams params_of(double base, int layout) {
  return {base, static_cast<posenc::SinusoidalLayout>(layout)};
}

// The rules the JS layer asks before it allocates: params' (sinusoidal_check), the shift's
// (sinusoidal_shift_check).
std::string sinusoidal_check(double base, int layout) {
  return message(posenc::sinusoidal_check(params_of(base, layout)));
}
std::string sinusoidal_shift_check(double k, double d_model, double base, int layout) {
  return message(posenc::sinusoidal_shift_check(k, static_cast<std::size_t>(d_model), params_of(base, layout)));
}

// pos: 0 for positions 0 … seq_len-1, else float64 positions[seq_len].
std::string sinusoidal(Ptr out, double seq_len, double d_model, double base, int layout, Ptr pos) {
  const posenc::SinusoidalParams params = params_of(base, layout);
  const auto n = static_cast<std::size_t>(seq_len), d = static_cast<std::size_t>(d_model);
  return message(pos ? posenc::sinusoidal_at(at<float>(out), at<const double>(pos), n, d, params)
                     : posenc::sinusoidal(at<float>(out), n, d, params));
}

std::string sinusoidal_shift(Ptr m, double k, double d_model, double base, int layout) {
  return message(posenc::sinusoidal_shift(at<float>(m), k, static_cast<std::size_t>(d_model), params_of(base, layout)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_sinusoidal) {
  using emscripten::function;
  function("sinusoidalCheck", &sinusoidal_check);
  function("sinusoidalShiftCheck", &sinusoidal_shift_check);
  function("sinusoidal", &sinusoidal);
  function("sinusoidalShift", &sinusoidal_shift);
}
