// posenc: T5 relative position buckets and biases (Raffel et al. 2020, "Exploring the Limits of
// Transfer Learning with a Unified Text-to-Text Transformer"), exactly as Hugging Face
// transformers' T5Attention._relative_position_bucket computes them (in float32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "posenc/status.hpp"

namespace posenc {

struct T5BucketParams {
  bool bidirectional = true;  // encoder: true; decoder self-attention: false
  int num_buckets = 32;       // >= 4 when bidirectional (2 halves of >= 2), else >= 2
  int max_distance = 128;     // > the exact range (num_buckets/2, halved again when bidirectional)
};

// Checks params (t5_bias runs it first; the JS layer before it allocates). Status: kBadArgument
// naming num_buckets or max_distance.
Status t5_check(const T5BucketParams& params) noexcept;

// The bucket of relative_position = key - query: exact buckets for |d| < max_exact, then
// logarithmic up to max_distance, the last bucket beyond. Bidirectional: keys after the query
// use the upper half. Precondition: t5_check(params).ok().
int t5_bucket(std::int64_t relative_position, const T5BucketParams& params) noexcept;

// bias[n_heads][q_len][k_len] = table[bucket(j - qpos_i)][h], table [num_buckets][n_heads]
// (HF's relative_attention_bias.weight), query i at key position qpos_i = query_offset + i.
// Default: the last q_len key positions (k_len - q_len + i, HF's slice
// position_bias[:, :, -q_len:, :] when decoding with a cache; then q_len must be <= k_len);
// query_offset 0 is HF's compute_bias without a cache and onnxruntime's RelativePositionBias.
Status t5_bias(float* bias, const float* table, std::size_t n_heads, std::size_t q_len, std::size_t k_len,
               const T5BucketParams& params, std::optional<std::size_t> query_offset = std::nullopt) noexcept;

}  // namespace posenc
