// Learned tables' adapters (js/learned.js): init, lookup, embed.
#include <emscripten/bind.h>

#include <string>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

// The rules the JS layer asks before it allocates (std's; one position's or token's, before it
// copies or gathers rows; embed's scale).
std::string learned_init_check(double std) { return message(posenc::learned_init_check(std)); }
std::string learned_lookup_check(double pos, double offset, double max_len) {
  return message(posenc::learned_lookup_check(pos, offset, static_cast<std::size_t>(max_len)));
}
std::string embed_check(double scale) { return message(posenc::embed_check(scale)); }
std::string embed_token_check(double token, double vocab, double pos, double pos_rows) {
  return message(
      posenc::embed_token_check(token, static_cast<std::size_t>(vocab), pos, static_cast<std::size_t>(pos_rows)));
}

std::string learned_init(Ptr out, double max_len, double d_model, double seed, double std) {
  return message(posenc::learned_init(at<float>(out), static_cast<std::size_t>(max_len),
                                      static_cast<std::size_t>(d_model), static_cast<std::uint64_t>(seed), std));
}

std::string learned_lookup(Ptr out, Ptr table, double max_len, double d_model, Ptr pos, double n, int offset) {
  return message(posenc::learned_lookup(at<float>(out), at<const float>(table), static_cast<std::size_t>(max_len),
                                        static_cast<std::size_t>(d_model), at<const std::int32_t>(pos),
                                        static_cast<std::size_t>(n), offset));
}

std::string embed(Ptr out, Ptr tokens, double n, Ptr tok_emb, double vocab, double d_model, Ptr pos_emb,
                  double pos_rows, Ptr pos, double scale) {
  return message(posenc::embed(at<float>(out), at<const std::int32_t>(tokens), static_cast<std::size_t>(n),
                               at<const float>(tok_emb), static_cast<std::size_t>(vocab),
                               static_cast<std::size_t>(d_model), at<const float>(pos_emb),
                               static_cast<std::size_t>(pos_rows), at<const std::int32_t>(pos), scale));
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_learned) {
  using emscripten::function;
  function("learnedInitCheck", &learned_init_check);
  function("learnedLookupCheck", &learned_lookup_check);
  function("embedCheck", &embed_check);
  function("embedTokenCheck", &embed_token_check);
  function("learnedInit", &learned_init);
  function("learnedLookup", &learned_lookup);
  function("embed", &embed);
}
