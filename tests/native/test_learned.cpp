#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"

using posenc::StatusCode;

TEST_CASE("learned_init: N(0, 0.02²) statistics, the same numbers for a seed, different for another") {
  const std::size_t max_len = 512, d_model = 256;
  std::vector<float> a(max_len * d_model), b(a.size()), c(a.size());
  REQUIRE(posenc::learned_init(a.data(), max_len, d_model, 42).ok());
  REQUIRE(posenc::learned_init(b.data(), max_len, d_model, 42).ok());
  REQUIRE(posenc::learned_init(c.data(), max_len, d_model, 43).ok());
  CHECK(a == b);
  CHECK(a != c);
  double sum = 0, sq = 0, beyond3 = 0;
  for (float v : a) {
    sum += v;
    sq += double(v) * v;
    beyond3 += std::fabs(v) > 3 * 0.02;
  }
  const double n = double(a.size()), mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  CHECK(std::fabs(mean) < 3 * 0.02 / std::sqrt(n) * 2);  // within ~6 standard errors
  CHECK(sd == doctest::Approx(0.02).epsilon(0.01));
  CHECK(beyond3 / n == doctest::Approx(0.0027).epsilon(0.15));  // two-sided 3-sigma tail of a normal
}

TEST_CASE("learned_lookup: rows by position and offset; a position past max_len is refused") {
  const std::size_t max_len = 6, d_model = 3;
  std::vector<float> table(max_len * d_model);
  for (std::size_t k = 0; k < table.size(); ++k) table[k] = float(k);
  const std::vector<std::int32_t> pos = {0, 3, 1};
  std::vector<float> out(pos.size() * d_model);
  REQUIRE(posenc::learned_lookup(out.data(), table.data(), max_len, d_model, pos.data(), pos.size(), 2).ok());
  CHECK(out == std::vector<float>{6, 7, 8, 15, 16, 17, 9, 10, 11});  // rows 2, 5, 3 (RoBERTa-style offset)
  const std::vector<std::int32_t> past = {0, 4};
  const auto s = posenc::learned_lookup(out.data(), table.data(), max_len, d_model, past.data(), 2, 2);
  CHECK(s.code == StatusCode::kBadArgument);
  CHECK(std::string(s.message).find("max_len") != std::string::npos);
}

TEST_CASE("embed: token rows times scale plus position rows") {
  const std::size_t vocab = 4, d_model = 2;
  const std::vector<float> tok = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> pe = {0.5f, -0.5f, 0.25f, -0.25f, 0, 0};
  const std::vector<std::int32_t> tokens = {3, 0};
  std::vector<float> out(4);
  REQUIRE(posenc::embed(out.data(), tokens.data(), 2, tok.data(), vocab, d_model, pe.data(), 3, nullptr, 2.0).ok());
  CHECK(out == std::vector<float>{14.5f, 15.5f, 2.25f, 3.75f});
  const std::vector<std::int32_t> pos = {2, 2};
  REQUIRE(posenc::embed(out.data(), tokens.data(), 2, tok.data(), vocab, d_model, pe.data(), 3, pos.data(), 1.0).ok());
  CHECK(out == std::vector<float>{7, 8, 1, 2});
  const std::vector<std::int32_t> bad_tokens = {4, 0};
  CHECK(posenc::embed(out.data(), bad_tokens.data(), 2, tok.data(), vocab, d_model, pe.data(), 3, nullptr, 1.0).code ==
        StatusCode::kBadArgument);
  const std::vector<std::int32_t> bad_pos = {0, 3};
  CHECK(
      posenc::embed(out.data(), tokens.data(), 2, tok.data(), vocab, d_model, pe.data(), 3, bad_pos.data(), 1.0).code ==
      StatusCode::kBadArgument);
}

TEST_CASE("learned checks: std's, a row's, scale's and a token's rules, with the functions' messages") {
  // The JS layer asks these before it allocates (a row or token at a time): each must be the rule
  // the function states, with its message.
  std::vector<float> table(4 * 2, 1.0f), out(4 * 2);
  const double bad_std[] = {-0.02, NAN, INFINITY};
  for (const double std : bad_std) {
    const posenc::Status s = posenc::learned_init_check(std);
    CHECK(std::string(s.message) == "std must be finite and >= 0");
    CHECK(std::string(posenc::learned_init(out.data(), 4, 2, 1, std).message) == s.message);
  }
  CHECK(posenc::learned_init_check(0.0).ok());
  CHECK(posenc::learned_lookup_check(-1.0, 2.0, 4).ok());  // RoBERTa's padding row 1
  for (const std::int32_t pos : {-3, 2, 100}) {
    const posenc::Status s = posenc::learned_lookup_check(pos, 2.0, 4);
    CHECK(std::string(s.message) == "pos + offset must be in [0, max_len)");
    CHECK(std::string(posenc::learned_lookup(out.data(), table.data(), 4, 2, &pos, 1, 2).message) == s.message);
  }
  CHECK(std::string(posenc::embed_check(NAN).message) == "scale must be finite");
  CHECK(posenc::embed_check(1.0).ok());
  const std::int32_t tokens[] = {0, 4, -1}, positions[] = {0, 0, 9};
  CHECK(std::string(
            posenc::embed(out.data(), tokens, 1, table.data(), 4, 2, table.data(), 4, nullptr, INFINITY).message) ==
        "scale must be finite");
  for (std::size_t t = 1; t < 3; ++t) {
    const posenc::Status s = posenc::embed_token_check(tokens[t], 4, positions[t], 4);
    CHECK(std::string(s.message) == "tokens must be in [0, vocab)");
    CHECK(std::string(posenc::embed(out.data(), tokens + t, 1, table.data(), 4, 2, table.data(), 4, positions + t, 1.0)
                          .message) == s.message);
  }
  CHECK(std::string(posenc::embed_token_check(0, 4, 9, 4).message) == "pos must be in [0, pos_rows)");
  CHECK(posenc::embed_token_check(3, 4, 3, 4).ok());
}
