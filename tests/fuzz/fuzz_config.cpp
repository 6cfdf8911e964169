// Fuzz target: config import (JSON text → RoPE params) in both dialects, then the frequencies of
// whatever parsed. Nothing may crash; parsed parameters give finite frequencies or a status.
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "posenc/posenc.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto dialect : {posenc::ConfigDialect::kHuggingFace, posenc::ConfigDialect::kGguf}) {
    for (const char* layer : {"", "sliding_attention", "full_attention"}) {
      posenc::RopeParams p;
      std::string detail;
      const auto s = posenc::rope_params_from_config(text, {dialect, layer}, &p, &detail);
      if (!s.ok()) {
        if (s.message == nullptr || s.message[0] == '\0') __builtin_trap();  // a failure must say why
        continue;
      }
      const std::size_t rot = posenc::rope_rot_dim(p);
      if (rot == 0 || rot > (1u << 16)) continue;
      std::vector<double> inv(rot / 2);
      double af = 0;
      if (posenc::rope_frequencies(p, size, inv.data(), inv.size(), &af).ok()) {
        for (double f : inv)
          if (!std::isfinite(f) || f < 0) __builtin_trap();
        if (!std::isfinite(af)) __builtin_trap();
      }
    }
  }
  return 0;
}
