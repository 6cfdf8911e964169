#include "posenc/sinusoidal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "kernels/kernels.hpp"

namespace posenc {
namespace {

// inv_freq[j] = ω_(first + j), j < n, for the layout's frequency series.
void frequencies(std::size_t d_model, const SinusoidalParams& params, double* inv_freq, std::size_t n,
                 std::size_t first = 0) {
  const double d = static_cast<double>(d_model);
  const double half = static_cast<double>(d_model / 2);
  const double step = std::log(params.base) / std::fmax(half - 1.0, 1.0);
  for (std::size_t j = 0; j < n; ++j) {
    const double i = static_cast<double>(first + j);
    inv_freq[j] =
        params.layout == SinusoidalLayout::kInterleaved ? std::pow(params.base, -2.0 * i / d) : std::exp(-i * step);
  }
}

}  // namespace

Status sinusoidal_check(const SinusoidalParams& params) noexcept {
  if (!(std::isfinite(params.base) && params.base > 0.0))
    return {StatusCode::kBadArgument, "base must be finite and > 0"};
  if (params.layout != SinusoidalLayout::kInterleaved && params.layout != SinusoidalLayout::kConcat)
    return {StatusCode::kBadArgument, "layout is not a known SinusoidalLayout"};
  return Status::Ok();
}

namespace {

Status sinusoidal_rows(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                       const SinusoidalParams& params) {
  if (d_model == 0) return {StatusCode::kBadArgument, "d_model must be > 0"};
  if (Status s = sinusoidal_check(params); !s.ok()) return s;
  if (n_pos > std::numeric_limits<std::size_t>::max() / d_model)
    return {StatusCode::kTooLarge, "seq_len * d_model overflows"};
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  if (pos != nullptr)
    for (std::size_t t = 0; t < n_pos; ++t)
      if (!std::isfinite(pos[t])) return {StatusCode::kBadArgument, "pos must be finite"};

  std::vector<double> inv_freq;
  try {
    inv_freq.resize((d_model + 1) / 2);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "d_model too large for memory"};
  }
  frequencies(d_model, params, inv_freq.data(), inv_freq.size());
  if (params.layout == SinusoidalLayout::kInterleaved)
    kernels::sinusoidal_interleaved(out, pos, n_pos, d_model, inv_freq.data());
  else kernels::sinusoidal_concat(out, pos, n_pos, d_model, inv_freq.data());
  return Status::Ok();
}

}  // namespace

Status sinusoidal(float* out, std::size_t seq_len, std::size_t d_model, const SinusoidalParams& params) noexcept {
  if (seq_len == 0) return {StatusCode::kBadArgument, "seq_len must be > 0"};
  return sinusoidal_rows(out, nullptr, seq_len, d_model, params);
}

Status sinusoidal_at(float* out, const double* pos, std::size_t n_pos, std::size_t d_model,
                     const SinusoidalParams& params) noexcept {
  if (n_pos == 0) return {StatusCode::kBadArgument, "n_pos must be > 0"};
  if (pos == nullptr) return {StatusCode::kBadArgument, "pos must not be null"};
  return sinusoidal_rows(out, pos, n_pos, d_model, params);
}

Status sinusoidal_shift_check(double k, std::size_t d_model, const SinusoidalParams& params) noexcept {
  if (d_model == 0 || d_model % 2 != 0) return {StatusCode::kBadArgument, "d_model must be even and > 0"};
  if (Status s = sinusoidal_check(params); !s.ok()) return s;
  if (!std::isfinite(k)) return {StatusCode::kBadArgument, "k must be finite"};
  if (d_model > std::numeric_limits<std::size_t>::max() / d_model)
    return {StatusCode::kTooLarge, "d_model * d_model overflows"};
  return Status::Ok();
}

Status sinusoidal_shift(float* m, double k, std::size_t d_model, const SinusoidalParams& params) noexcept {
  if (Status s = sinusoidal_shift_check(k, d_model, params); !s.ok()) return s;
  if (m == nullptr) return {StatusCode::kBadArgument, "m must not be null"};
  const std::size_t half = d_model / 2;
  std::fill(m, m + d_model * d_model, 0.0f);
  for (std::size_t i = 0; i < half; ++i) {
    double w;
    frequencies(d_model, params, &w, 1, i);
    const auto c = static_cast<float>(std::cos(k * w)), s = static_cast<float>(std::sin(k * w));
    const bool inter = params.layout == SinusoidalLayout::kInterleaved;
    const std::size_t a = inter ? 2 * i : i, b = inter ? 2 * i + 1 : i + half;  // (sin, cos) rows
    m[a * d_model + a] = c;
    m[a * d_model + b] = s;
    m[b * d_model + a] = -s;
    m[b * d_model + b] = c;
  }
  return Status::Ok();
}

}  // namespace posenc
