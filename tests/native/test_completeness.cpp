// Completeness of the layer lists: every scheme the C++ core names — each RopeScaling
// (rope_scaling_name over kNumRopeScalings) and each lab Scheme (scheme_name over kNumSchemes) —
// appears in every layer that lists them: the TypeScript unions, the docs (the scheme's page, the
// README's table, the lab's model card, each lab scheme's page in docs/schemes/), the float64 twins'
// cases and the page's scheme entries.
// A name missing from a layer fails with the layer and the file. The lists are read from the files
// (POSENC_SOURCE_DIR), so a layer that is edited by hand and forgotten is caught here.
#include <doctest/doctest.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "posenc/lab.hpp"
#include "posenc/rope.hpp"

namespace {

// The file's text, or "" when there is none (*found false).
std::string read_if_any(const std::string& path, bool* found) {
  std::ifstream in(std::string(POSENC_SOURCE_DIR) + "/" + path, std::ios::binary);
  *found = in.good();
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_source(const std::string& path) {
  bool found = false;
  std::string text = read_if_any(path, &found);
  REQUIRE_MESSAGE(found, "cannot read ", path);
  return text;
}

// The text from the first match of `start` to the first match of `end` after it ("" if absent).
std::string section(const std::string& text, const std::string& start, const std::string& end) {
  const std::size_t a = text.find(start);
  if (a == std::string::npos) return "";
  const std::size_t b = text.find(end, a + start.size());
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Every word (letters, digits, _) right after `prefix` in text and followed by `suffix`.
std::set<std::string> after(const std::string& text, const std::string& prefix, const std::string& suffix = "") {
  std::set<std::string> out;
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    std::size_t end = at + prefix.size();
    while (end < text.size() && word_char(text[end])) ++end;
    const std::string word = text.substr(at + prefix.size(), end - at - prefix.size());
    if (!word.empty() && text.compare(end, suffix.size(), suffix) == 0) out.insert(word);
  }
  return out;
}

// Every word of text.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = at;
    while (end < text.size() && word_char(text[end])) ++end;
    if (end > at) out.insert(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::set<std::string> merged(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// The enumerators of `enum class name : int { … };` in a header, in order (the C++ core's own
// statement of the list, for the layers that use them): each line's first word, if it is kName.
std::vector<std::string> enumerators(const std::string& header, const std::string& name) {
  const std::string body = section(header, "enum class " + name + " : int {", "};");
  std::vector<std::string> out;
  for (std::size_t at = body.find('\n'); at != std::string::npos; at = body.find('\n', at + 1)) {
    std::size_t begin = at + 1;
    while (begin < body.size() && body[begin] == ' ') ++begin;
    std::size_t end = begin;
    while (end < body.size() && word_char(body[end])) ++end;
    if (end > begin + 1 && body[begin] == 'k' && std::isupper(static_cast<unsigned char>(body[begin + 1])))
      out.push_back(body.substr(begin, end - begin));
  }
  return out;
}

// One layer's list: where it is, and the names it holds.
struct Layer {
  std::string layer, file;
  std::set<std::string> names;
};

void check_complete(const std::string& what, const std::vector<std::string>& core, const Layer& layer,
                    const std::set<std::string>& not_listed = {}) {
  CHECK_MESSAGE(!layer.names.empty(), what, ": the ", layer.layer, " list was not found in ", layer.file);
  for (const std::string& name : core) {
    if (not_listed.count(name)) continue;
    CHECK_MESSAGE(layer.names.count(name), what, " '", name, "' is missing from the ", layer.layer,
                  " layer: ", layer.file);
  }
}

// Each lab scheme's page in docs/schemes/, one line per scheme (a page may describe several, as
// kerple.md both kernels and rope.md RoPE's variants). A new scheme adds its line here; the test
// below fails, naming the scheme, until it has one. (Not formatted: a line per scheme.)
// clang-format off
const std::map<std::string, std::string> kLabSchemePages = {
    {"none", "docs/schemes/nope.md"},
    {"sinusoidal", "docs/schemes/sinusoidal.md"},
    {"learned", "docs/schemes/learned.md"},
    {"rope", "docs/schemes/rope.md"},
    {"alibi", "docs/schemes/alibi.md"},
    {"t5", "docs/schemes/t5.md"},
    {"xpos", "docs/schemes/rope.md"},
    {"kerple_log", "docs/schemes/kerple.md"},
    {"kerple_power", "docs/schemes/kerple.md"},
    {"fire", "docs/schemes/fire.md"},
    {"cope", "docs/schemes/cope.md"},
    {"p_rope", "docs/schemes/rope.md"},
    {"irope", "docs/schemes/mixed-layers.md"},
    {"nope_interval", "docs/schemes/mixed-layers.md"},
    {"gemma3", "docs/schemes/mixed-layers.md"},
    {"swa_rope_nope", "docs/schemes/mixed-layers.md"},
};
// clang-format on

}  // namespace

TEST_CASE(
    "completeness: every RoPE scaling type is in the types, its docs page, the README table and the twins' cases") {
  std::vector<std::string> core;
  for (int k = 0; k < posenc::kNumRopeScalings; ++k)
    core.push_back(posenc::rope_scaling_name(static_cast<posenc::RopeScaling>(k)));
  const std::string rope_hpp = read_source("cpp/include/posenc/rope.hpp");
  const std::vector<std::string> enums = enumerators(rope_hpp, "RopeScaling");
  REQUIRE(enums.size() == core.size());

  check_complete("RoPE scaling", core,
                 {"types", "js/posenc.d.ts (RopeScalingType)",
                  after(section(read_source("js/posenc.d.ts"), "export type RopeScalingType", ";"), "'", "'")});
  check_complete("RoPE scaling", core,
                 {"docs page", "docs/schemes/rope.md (the scaling types, each in backticks)",
                  merged(after(read_source("docs/schemes/rope.md"), "`", "`"),
                         after(read_source("docs/schemes/rope.md"), "`'", "'`"))});
  // The README's row of RoPE "+ scaling" names the scalings; none is RoPE itself.
  check_complete("RoPE scaling", core,
                 {"README table", "README.md (the RoPE row of the table of schemes)",
                  words(section(read_source("README.md"), "| [RoPE](", "\n"))},
                 {"none"});
  // The float64 cases of the native suite set each scaling by its enumerator (none is the default).
  std::set<std::string> cases;
  const std::set<std::string> used = after(read_source("tests/native/test_rope.cpp"), "RopeScaling::");
  for (std::size_t k = 0; k < enums.size(); ++k)
    if (used.count(enums[k])) cases.insert(core[k]);
  check_complete("RoPE scaling", core, {"float64 cases", "tests/native/test_rope.cpp (RopeScaling::k…)", cases},
                 {"none"});
}

TEST_CASE("completeness: every lab scheme is in the types, the lab's model card, the page's entries and the twin") {
  std::vector<std::string> core;
  for (std::size_t s = 0; s < posenc::lab::kNumSchemes; ++s)
    core.push_back(posenc::lab::scheme_name(static_cast<posenc::lab::Scheme>(s)));
  const std::vector<std::string> enums = enumerators(read_source("cpp/lab/include/posenc/lab.hpp"), "Scheme");
  REQUIRE(enums.size() == core.size());

  check_complete("lab scheme", core,
                 {"types", "js/posenc.d.ts (LabScheme)",
                  after(section(read_source("js/posenc.d.ts"), "export type LabScheme =", ";"), "'", "'")});
  check_complete("lab scheme", core,
                 {"docs", "docs/lab.md (the model card's Schemes, each in backticks)",
                  after(section(read_source("docs/lab.md"), "* **Schemes**", "\n* **"), "`", "`")});
  check_complete("lab scheme", core,
                 {"page", "web/views/shared/schemes.js (PAGE_SCHEMES, an entry with id: '…')",
                  after(read_source("web/views/shared/schemes.js"), " id: '", "'")});
  // The float64 twin of the gradient checks has a term for each scheme (NoPE adds none).
  std::set<std::string> twin;
  const std::set<std::string> used =
      after(section(read_source("tests/native/test_lab.cpp"), "struct Twin {", "\n};"), "Scheme::");
  for (std::size_t s = 0; s < enums.size(); ++s)
    if (used.count(enums[s])) twin.insert(core[s]);
  check_complete("lab scheme", core, {"float64 twin", "tests/native/test_lab.cpp (struct Twin)", twin}, {"none"});
}

TEST_CASE("completeness: every lab scheme has its page in docs/schemes/, which names it") {
  for (std::size_t s = 0; s < posenc::lab::kNumSchemes; ++s) {
    const std::string name = posenc::lab::scheme_name(static_cast<posenc::lab::Scheme>(s));
    const auto page = kLabSchemePages.find(name);
    CHECK_MESSAGE(page != kLabSchemePages.end(), "lab scheme '", name,
                  "' is missing from the docs page layer: no page for it in kLabSchemePages "
                  "(tests/native/test_completeness.cpp), one line per scheme");
    if (page == kLabSchemePages.end()) continue;
    bool found = false;
    const std::string text = read_if_any(page->second, &found);
    CHECK_MESSAGE(found, "lab scheme '", name, "' is missing from the docs page layer: ", page->second,
                  " does not exist");
    // The page names the scheme as the lab takes it: `name` or `'name'` (as `scheme: 'name'`).
    const std::set<std::string> named = merged(after(text, "`", "`"), after(text, "'", "'`"));
    CHECK_MESSAGE((!found || named.count(name)), "lab scheme '", name,
                  "' is missing from the docs page layer: ", page->second, " (the scheme's name in backticks, as `",
                  name, "` or `scheme: '", name, "'`)");
  }
}
