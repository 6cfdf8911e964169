// What the Embind adapters share: heap addresses passed as numbers (Ptr, at), and the option
// groups more than one adapter reads from the JS layer's normalized options (RoPE's params, read by
// the RoPE, model-file and attention adapters; the positional bias terms).
#pragma once

#include <emscripten/val.h>

#include <cstdint>

#include "posenc/attention.hpp"
#include "posenc/rope.hpp"

namespace posenc_js {

using Ptr = std::uintptr_t;

template <class T>
T* at(Ptr p) {
  return reinterpret_cast<T*>(p);
}

// RoPE params as the JS layer normalizes them (every field present; NaN = unset for optionals;
// the scaling by its name) → posenc::RopeParams; flat_params writes that shape back. In embind_rope.cpp.
posenc::RopeParams rope_params(const emscripten::val& p);
emscripten::val flat_params(const posenc::RopeParams& p);
// How a rotation is applied: layout, precision, gain, the rotated slice's offset, ggml's parameters.
posenc::RopeApplyOptions apply_options(int layout, int precision, double attention_factor, double rot_offset,
                                       const posenc::GgmlRope* ggml = nullptr);

// The positional bias terms (posenc::PositionBias) of attention() and kvCacheAttend, as
// js/attention.js positionBiasOption writes them: alibiSlopes, t5Table (addresses, 0 = none),
// t5Bidirectional, t5NumBuckets, t5MaxDistance.
inline posenc::PositionBias position_bias(const emscripten::val& o) {
  posenc::PositionBias b;
  b.alibi_slopes = at<const float>(o["alibiSlopes"].as<Ptr>());
  b.t5_table = at<const float>(o["t5Table"].as<Ptr>());
  b.t5 = {o["t5Bidirectional"].as<bool>(), o["t5NumBuckets"].as<int>(), o["t5MaxDistance"].as<int>()};
  return b;
}

}  // namespace posenc_js
