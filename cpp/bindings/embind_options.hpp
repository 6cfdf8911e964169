// What the Embind adapters share: heap addresses passed as numbers (Ptr, at), and the option
// groups more than one adapter reads from the JS layer's normalized options (RoPE's params, read by
// the RoPE, model-file and attention adapters; the positional bias terms).
#pragma once

#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "posenc/attention.hpp"
#include "posenc/model_file.hpp"
#include "posenc/rope.hpp"

namespace posenc_js {

using Ptr = std::uintptr_t;

template <class T>
T* at(Ptr p) {
  return reinterpret_cast<T*>(p);
}

// o[key] into *out when the JS layer gave it (neither undefined nor null); *out keeps its default
// otherwise. For the options objects whose fields may be left out (attention's, the cache's attend).
template <class T>
void read_if(const emscripten::val& o, const char* key, T* out) {
  if (const emscripten::val v = o[key]; !v.isUndefined() && !v.isNull()) *out = v.as<T>();
}
template <class T>
void read_if(const emscripten::val& o, const char* key, std::optional<T>* out) {
  if (const emscripten::val v = o[key]; !v.isUndefined() && !v.isNull()) *out = v.as<T>();
}

// options.queryOffset of the bias functions (alibiBias, t5Bias): NaN = the default (queries at the
// last q_len key positions).
inline std::optional<std::size_t> query_offset(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(v));
}

// RoPE params in their public shape (posenc.d.ts RopeParams, as js/rope_params.js checks them; a
// field left out keeps posenc::RopeParams' default) → posenc::RopeParams; public_params writes that
// shape back, with the fields readModel shows. In embind_rope.cpp, which lists the fields once.
posenc::RopeParams rope_params(const emscripten::val& p);
emscripten::val public_params(const posenc::RopeParams& p);
// How a rotation is applied: layout, precision, gain, the rotated slice's offset, ggml's parameters.
posenc::RopeApplyOptions apply_options(int layout, int precision, double attention_factor, double rot_offset,
                                       const posenc::GgmlRope* ggml = nullptr);

// The frequencies a rotation turns by, as the JS layer passes them (js/rope_params.js
// frequencyArg): null (no RoPE), { invFreq } (the heap address of a table the caller gave) or
// { params, seqLen } (RoPE params in their public shape). Params' frequencies (rope_frequencies at
// seq_len) are computed here, into memory this object owns, for the call that applies them: params
// reach the rotation in one call and the table never crosses into JS. ggml: ggml's parameters too
// (ggml_rope_params), for precision ggml. In embind_rope.cpp.
class RopeFrequencies {
 public:
  explicit RopeFrequencies(const emscripten::val& f, bool ggml = false);
  RopeFrequencies(const posenc::RopeParams& p, std::size_t seq_len, bool ggml);
  RopeFrequencies(const RopeFrequencies&) = delete;  // inv_freq() may point into owned_
  RopeFrequencies& operator=(const RopeFrequencies&) = delete;
  const posenc::Status& status() const { return status_; }
  const double* inv_freq() const { return inv_freq_; }
  const posenc::GgmlRope* ggml() const { return ggml_ ? &*ggml_ : nullptr; }
  // The gain: the call's, unless it leaves it to the frequencies (NaN): the params' (1 for a table).
  double attention_factor(double given) const { return std::isnan(given) ? attention_factor_ : given; }

 private:
  void compute(const posenc::RopeParams& p, std::size_t seq_len, bool ggml);

  std::vector<double> owned_;
  std::optional<posenc::GgmlRope> ggml_;
  const double* inv_freq_ = nullptr;
  double attention_factor_ = 1.0;
  posenc::Status status_;
};

// A float32 vector as a fresh Float32Array that JS owns.
inline emscripten::val float_array(const std::vector<float>& v) {
  return emscripten::val(emscripten::typed_memory_view(v.size(), v.data())).call<emscripten::val>("slice");
}

// What a scheme's binding file adds beside its functions, the way EMSCRIPTEN_BINDINGS adds those:
// by a static SchemePart object in that file (as embind_alibi.cpp does), so a scheme's binding
// is its own file. model_info: its field of readModel's public shape (posenc.d.ts ModelInfo), set
// on `out` when the file describes it; bias: its positional bias term (posenc::PositionBias), read
// from the options attention() and kvCacheAttend take, as its JS term's fields() wrote them.
struct SchemePart {
  void (*model_info)(const posenc::ModelInfo& m, emscripten::val& out);
  void (*bias)(const emscripten::val& options, posenc::PositionBias& b);
};
inline std::vector<SchemePart>& scheme_parts() {
  static std::vector<SchemePart> parts;
  return parts;
}
struct AddSchemePart {
  explicit AddSchemePart(SchemePart part) { scheme_parts().push_back(part); }
};

// The positional bias terms of attention() and kvCacheAttend: each scheme part's.
inline posenc::PositionBias position_bias(const emscripten::val& o) {
  posenc::PositionBias b;
  for (const SchemePart& part : scheme_parts())
    if (part.bias) part.bias(o, b);
  return b;
}

}  // namespace posenc_js
