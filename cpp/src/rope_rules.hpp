// Internal: the rules of where a rotation sits in a head, which apply_rope_check (rope.cpp) and
// rope_frequencies (rope_frequencies.cpp) both state — rot_dim's own rule, then rot_dim and
// rot_offset within the head — and of its frequencies, which apply_rope and KvCache::create both
// state, each with one message.
#pragma once

#include <cmath>
#include <cstddef>

#include "posenc/status.hpp"

namespace posenc {

// rot_dim's own rule (an empty frequency table is a rot_dim of 0).
inline Status check_rot_dim(std::size_t rot_dim) {
  if (rot_dim == 0) return {StatusCode::kBadArgument, "rot_dim must be > 0"};
  if (rot_dim % 2 != 0) return {StatusCode::kBadArgument, "rot_dim must be even"};
  return Status::Ok();
}

// The rotated dims [rot_offset, rot_offset + rot_dim) within a head of head_dim.
inline Status check_rot_placement(std::size_t head_dim, std::size_t rot_dim, std::size_t rot_offset) {
  if (rot_dim > head_dim) return {StatusCode::kBadArgument, "rot_dim must be <= head_dim"};
  if (rot_offset > head_dim - rot_dim) return {StatusCode::kBadArgument, "rot_offset + rot_dim must be <= head_dim"};
  return Status::Ok();
}

// inv_freq[rot_dim / 2], every frequency finite.
inline Status check_inv_freq(const double* inv_freq, std::size_t rot_dim) {
  for (std::size_t k = 0; k < rot_dim / 2; ++k)
    if (!std::isfinite(inv_freq[k])) return {StatusCode::kBadArgument, "inv_freq must be finite"};
  return Status::Ok();
}

}  // namespace posenc
