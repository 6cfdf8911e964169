// Shared body of the model-file fuzz targets: read the bytes as one format (after the format's
// fixed prefix, so the fuzzer spends its time past the magic), then check what came back.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"

using Reader = posenc::Status (*)(const posenc::ByteSource&, posenc::ModelInfo*, std::string*,
                                  const posenc::ReadOptions&);

inline int fuzz_model_file(const std::uint8_t* data, std::size_t size, const char* prefix, std::size_t prefix_len,
                           Reader reader) {
  std::vector<std::uint8_t> file(prefix, prefix + prefix_len);
  file.insert(file.end(), data, data + size);
  posenc::ReadOptions options;
  options.max_table_floats = 1 << 20;  // keep the fuzzer's memory small; larger tables: kTooLarge
  for (int pass = 0; pass < 2; ++pass) {
    posenc::ModelInfo info;
    std::string detail;
    const auto src = posenc::memory_source(file.data(), file.size());
    const auto s = pass == 0 ? reader(src, &info, &detail, options) : posenc::read_model(src, &info, &detail, options);
    if (!s.ok()) {
      // A failure says why, and never claims the bytes were unavailable (they are all in memory).
      if (s.message == nullptr || s.message[0] == '\0' || detail.empty()) __builtin_trap();
      if (s.code == posenc::StatusCode::kUnavailable) __builtin_trap();
      continue;
    }
    if (info.position_table && !info.position_table->weights.empty() &&
        info.position_table->weights.size() != info.position_table->max_len * info.position_table->d_model)
      __builtin_trap();
    if (info.t5 && !info.t5->table.empty() &&
        info.t5->table.size() != static_cast<std::size_t>(info.t5->num_buckets) * info.t5->n_heads)
      __builtin_trap();
    if (info.rope) {
      const std::size_t rot = posenc::rope_rot_dim(*info.rope);
      if (rot == 0 || rot > (1u << 16)) continue;
      std::vector<double> inv(rot / 2);
      double af = 0;
      if (posenc::rope_frequencies(*info.rope, 4096, inv.data(), inv.size(), &af).ok()) {
        for (double f : inv)
          if (!std::isfinite(f) || f < 0) __builtin_trap();
        if (!std::isfinite(af)) __builtin_trap();
      }
    }
  }
  return 0;
}
