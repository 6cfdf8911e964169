#include "posenc/sinusoidal.hpp"

#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "kernels/kernels.hpp"

namespace posenc {

Status sinusoidal(float* out, std::size_t seq_len, std::size_t d_model,
                  const SinusoidalParams& params) noexcept {
  if (seq_len == 0) return {StatusCode::kBadArgument, "seq_len must be > 0"};
  if (d_model == 0) return {StatusCode::kBadArgument, "d_model must be > 0"};
  if (!(std::isfinite(params.base) && params.base > 0.0))
    return {StatusCode::kBadArgument, "base must be finite and > 0"};
  if (seq_len > std::numeric_limits<std::size_t>::max() / d_model)
    return {StatusCode::kTooLarge, "seq_len * d_model overflows"};
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};

  std::vector<double> inv_freq;
  try {
    inv_freq.resize((d_model + 1) / 2);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "d_model too large for memory"};
  }
  const double d = static_cast<double>(d_model);
  for (std::size_t i = 0; i < inv_freq.size(); ++i)
    inv_freq[i] = std::pow(params.base, -2.0 * static_cast<double>(i) / d);
  kernels::sinusoidal_interleaved(out, seq_len, d_model, inv_freq.data());
  return Status::Ok();
}

}  // namespace posenc
