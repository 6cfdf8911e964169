// posenc: learned absolute position tables (BERT, GPT-2) and token + position embedding.
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/status.hpp"

namespace posenc {

// out[max_len][d_model] drawn from N(0, std²) (BERT's and GPT-2's initializer_range 0.02), the same
// numbers on every platform for a seed: splitmix64 → two uniforms → Box–Muller, in float64.
// Status: kBadArgument for zero sizes or std not finite and >= 0; kTooLarge on overflow.
Status learned_init(float* out, std::size_t max_len, std::size_t d_model, std::uint64_t seed,
                    double std = 0.02) noexcept;
// learned_init's rule of std, which it runs first (the JS layer before it allocates): kBadArgument
// unless std is finite and >= 0.
Status learned_init_check(double std) noexcept;

// out[n][d_model] = table[pos[t] + offset] for a table[max_len][d_model] (RoBERTa: offset =
// padding_idx + 1 = 2). Status: kBadArgument "pos + offset must be in [0, max_len)" when a row is
// missing — a model trained on 512 positions has no row for a 513th.
Status learned_lookup(float* out, const float* table, std::size_t max_len, std::size_t d_model, const std::int32_t* pos,
                      std::size_t n, std::int32_t offset = 0) noexcept;
// learned_lookup's rule of one position (integers, as double), which it runs on each (the JS
// layer before it copies the table): kBadArgument "pos + offset must be in [0, max_len)".
Status learned_lookup_check(double pos, double offset, std::size_t max_len) noexcept;

// out[n][d_model] = tok_emb[tokens[t]] * scale + pos_emb[pos[t]] (Vaswani et al. §3.4 scale
// sqrt(d_model); BERT and GPT-2 use 1), tok_emb [vocab][d_model], pos_emb [pos_rows][d_model]
// from any source (sinusoidal, learned, ...); pos null: positions 0 … n-1.
// Status: kBadArgument for a token >= vocab or < 0, a position outside pos_emb, a non-finite scale
// (embed_check's and embed_token_check's).
Status embed(float* out, const std::int32_t* tokens, std::size_t n, const float* tok_emb, std::size_t vocab,
             std::size_t d_model, const float* pos_emb, std::size_t pos_rows, const std::int32_t* pos,
             double scale) noexcept;
// embed's rules, which it runs first (the JS layer before it gathers the rows a call uses):
// embed_check: kBadArgument unless scale is finite; embed_token_check, for each token (integers, as
// double): its id in [0, vocab), then its position in [0, pos_rows).
Status embed_check(double scale) noexcept;
Status embed_token_check(double token, std::size_t vocab, double pos, std::size_t pos_rows) noexcept;

}  // namespace posenc
