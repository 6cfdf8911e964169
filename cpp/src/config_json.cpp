// The JSON readers the config and model-file readers share (config_json.hpp).
#include "config_json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace posenc::config_json {

using nlohmann::json;

bool nesting_ok(std::string_view text, int max_depth) noexcept {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      if (++depth > max_depth) return false;
    } else if (ch == '}' || ch == ']') {
      --depth;
    }
  }
  return true;
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool number(const json& object, const char* key, double* out) {
  const json* v = member(object, key);
  if (v == nullptr || !v->is_number()) return false;
  *out = v->get<double>();
  return true;
}

bool whole(const json& object, const char* key, std::size_t* out) {
  double v;
  // At most 2^40 and what size_t holds (32 bits in WASM).
  if (!number(object, key, &v) ||
      !(v >= 0.0 && v <= std::min(1099511627776.0, static_cast<double>(std::numeric_limits<std::size_t>::max()))) ||
      std::floor(v) != v)
    return false;
  *out = static_cast<std::size_t>(v);
  return true;
}

bool string(const json& object, const char* key, std::string* out) {
  const json* v = member(object, key);
  if (v == nullptr || !v->is_string()) return false;
  *out = v->get<std::string>();
  return true;
}

}  // namespace posenc::config_json
