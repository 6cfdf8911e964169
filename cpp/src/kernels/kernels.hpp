// Internal kernel entry points. Their .cpp files are the only place that includes xsimd; callers
// (cpp/src/*.cpp) have already checked every shape and argument.
#pragma once

#include <cstddef>

namespace posenc::kernels {

const char* arch_name() noexcept;

// out[seq_len][d_model]; inv_freq[(d_model + 1) / 2] in float64. See sinusoidal.cpp.
void sinusoidal_interleaved(float* out, std::size_t seq_len, std::size_t d_model,
                            const double* inv_freq) noexcept;

}  // namespace posenc::kernels
