// Float64 scalar twins of the kernels: the straight formulas, written for clarity, never for speed.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace posenc::reference {

// PE[pos][2i] = sin(pos / base^(2i/d_model)), PE[pos][2i+1] = cos(same), row-major.
inline std::vector<double> sinusoidal(std::size_t seq_len, std::size_t d_model, double base) {
  std::vector<double> pe(seq_len * d_model);
  for (std::size_t pos = 0; pos < seq_len; ++pos)
    for (std::size_t j = 0; j < d_model; ++j) {
      const double angle = static_cast<double>(pos) /
                           std::pow(base, static_cast<double>(2 * (j / 2)) / static_cast<double>(d_model));
      pe[pos * d_model + j] = (j % 2 == 0) ? std::sin(angle) : std::cos(angle);
    }
  return pe;
}

}  // namespace posenc::reference
