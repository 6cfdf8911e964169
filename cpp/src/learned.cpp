#include "posenc/learned.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace posenc {
namespace {

std::uint64_t splitmix64(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform double in (0, 1]: 53 random bits, never 0 (Box–Muller takes its log).
double uniform(std::uint64_t* state) { return (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1.0p-53; }

bool overflows(std::size_t a, std::size_t b) { return b != 0 && a > std::numeric_limits<std::size_t>::max() / b; }

}  // namespace

Status learned_init_check(double std) noexcept {
  if (!(std::isfinite(std) && std >= 0.0)) return {StatusCode::kBadArgument, "std must be finite and >= 0"};
  return Status::Ok();
}

Status learned_init(float* out, std::size_t max_len, std::size_t d_model, std::uint64_t seed, double std) noexcept {
  if (max_len == 0) return {StatusCode::kBadArgument, "max_len must be > 0"};
  if (d_model == 0) return {StatusCode::kBadArgument, "d_model must be > 0"};
  if (Status s = learned_init_check(std); !s.ok()) return s;
  if (overflows(max_len, d_model)) return {StatusCode::kTooLarge, "max_len * d_model overflows"};
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  std::uint64_t state = seed;
  const std::size_t n = max_len * d_model;
  for (std::size_t k = 0; k < n; k += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform(&state)));
    const double a = kTwoPi * uniform(&state);
    out[k] = static_cast<float>(std * r * std::cos(a));
    if (k + 1 < n) out[k + 1] = static_cast<float>(std * r * std::sin(a));
  }
  return Status::Ok();
}

Status learned_lookup_check(double pos, double offset, std::size_t max_len) noexcept {
  const double row = pos + offset;  // exact: integers within ±2^53
  if (!(row >= 0.0 && row < static_cast<double>(max_len)))
    return {StatusCode::kBadArgument, "pos + offset must be in [0, max_len)"};
  return Status::Ok();
}

Status learned_lookup(float* out, const float* table, std::size_t max_len, std::size_t d_model, const std::int32_t* pos,
                      std::size_t n, std::int32_t offset) noexcept {
  if (max_len == 0) return {StatusCode::kBadArgument, "max_len must be > 0"};
  if (d_model == 0) return {StatusCode::kBadArgument, "d_model must be > 0"};
  if (n == 0) return {StatusCode::kBadArgument, "n must be > 0"};
  if (overflows(n, d_model) || overflows(max_len, d_model)) return {StatusCode::kTooLarge, "n * d_model overflows"};
  if (out == nullptr || table == nullptr || pos == nullptr)
    return {StatusCode::kBadArgument, "out, table and pos must not be null"};
  for (std::size_t t = 0; t < n; ++t)
    if (Status s = learned_lookup_check(pos[t], offset, max_len); !s.ok()) return s;
  for (std::size_t t = 0; t < n; ++t) {
    const float* src = table + static_cast<std::size_t>(pos[t] + offset) * d_model;
    std::copy(src, src + d_model, out + t * d_model);
  }
  return Status::Ok();
}

Status embed_check(double scale) noexcept {
  if (!std::isfinite(scale)) return {StatusCode::kBadArgument, "scale must be finite"};
  return Status::Ok();
}

Status embed_token_check(double token, std::size_t vocab, double pos, std::size_t pos_rows) noexcept {
  if (!(token >= 0.0 && token < static_cast<double>(vocab)))
    return {StatusCode::kBadArgument, "tokens must be in [0, vocab)"};
  if (!(pos >= 0.0 && pos < static_cast<double>(pos_rows)))
    return {StatusCode::kBadArgument, "pos must be in [0, pos_rows)"};
  return Status::Ok();
}

Status embed(float* out, const std::int32_t* tokens, std::size_t n, const float* tok_emb, std::size_t vocab,
             std::size_t d_model, const float* pos_emb, std::size_t pos_rows, const std::int32_t* pos,
             double scale) noexcept {
  if (n == 0) return {StatusCode::kBadArgument, "n must be > 0"};
  if (vocab == 0) return {StatusCode::kBadArgument, "vocab must be > 0"};
  if (d_model == 0) return {StatusCode::kBadArgument, "d_model must be > 0"};
  if (pos_rows == 0) return {StatusCode::kBadArgument, "pos_rows must be > 0"};
  if (Status s = embed_check(scale); !s.ok()) return s;
  if (overflows(n, d_model) || overflows(vocab, d_model) || overflows(pos_rows, d_model))
    return {StatusCode::kTooLarge, "sizes * d_model overflow"};
  if (out == nullptr || tokens == nullptr || tok_emb == nullptr || pos_emb == nullptr)
    return {StatusCode::kBadArgument, "out, tokens, tok_emb and pos_emb must not be null"};
  for (std::size_t t = 0; t < n; ++t)
    if (Status s = embed_token_check(tokens[t], vocab, pos != nullptr ? pos[t] : static_cast<double>(t), pos_rows);
        !s.ok())
      return s;
  const auto s = static_cast<float>(scale);
  for (std::size_t t = 0; t < n; ++t) {
    const float* e = tok_emb + static_cast<std::size_t>(tokens[t]) * d_model;
    const float* q = pos_emb + (pos != nullptr ? static_cast<std::size_t>(pos[t]) : t) * d_model;
    float* o = out + t * d_model;
    for (std::size_t d = 0; d < d_model; ++d) o[d] = e[d] * s + q[d];
  }
  return Status::Ok();
}

}  // namespace posenc
