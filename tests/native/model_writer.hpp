// Writers of small GGUF, safetensors and .npy files for the model-file tests (the readers are
// tested against files built here from the format specifications, byte by byte), and the two calls
// that read them back (model_file.cpp's suite and each scheme's).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "posenc/model_file.hpp"

namespace test_files {

// read_model over the bytes; the read must succeed (its detail is printed if not).
inline posenc::ModelInfo read(const std::vector<std::uint8_t>& bytes, const posenc::ReadOptions& options = {}) {
  posenc::ModelInfo info;
  std::string detail;
  const auto s = posenc::read_model(posenc::memory_source(bytes.data(), bytes.size()), &info, &detail, options);
  INFO(detail);
  REQUIRE(s.ok());
  return info;
}

// model_info_from_config over config.json text; the read must succeed.
inline posenc::ModelInfo read_config(const std::string& json) {
  posenc::ModelInfo info;
  std::string detail;
  INFO(json);
  REQUIRE(posenc::model_info_from_config(json, &info, &detail).ok());
  return info;
}

class Bytes {
 public:
  std::vector<std::uint8_t> data;
  template <class T>
  void put(T v) {
    std::uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // this test host is little-endian, as the formats are
    data.insert(data.end(), b, b + sizeof(T));
  }
  void put_bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    data.insert(data.end(), b, b + n);
  }
  void str(const std::string& s) {
    put<std::uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
};

// GGUF v3. Values: u32, f32, string, an array of f32, i32 (gguf-py's type for Python ints) or of
// strings; tensors of any ggml type, F32 (type 0) written from values.
struct Gguf {
  using Value = std::variant<std::uint32_t, float, std::string, std::vector<float>, std::vector<std::string>,
                             std::vector<std::int32_t>>;
  std::vector<std::pair<std::string, Value>> kv;
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> ne;  // ne[0] fastest
    std::uint32_t type;             // 0 F32, 1 F16
    std::vector<std::uint8_t> bytes;
    std::optional<std::uint64_t> offset = std::nullopt;  // a data offset other than the one due
  };
  std::vector<Tensor> tensors;

  Gguf& set(const std::string& k, Value v) {
    kv.emplace_back(k, std::move(v));
    return *this;
  }
  Gguf& f32_tensor(const std::string& name, std::vector<std::uint64_t> ne, const std::vector<float>& v) {
    Tensor t{name, std::move(ne), 0, std::vector<std::uint8_t>(v.size() * 4)};
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    tensors.push_back(std::move(t));
    return *this;
  }
  // A tensor of `bytes` zero bytes (a stand-in for weights the reader must not read).
  Gguf& raw_tensor(const std::string& name, std::vector<std::uint64_t> ne, std::uint32_t type, std::size_t bytes) {
    tensors.push_back({name, std::move(ne), type, std::vector<std::uint8_t>(bytes)});
    return *this;
  }

  // Writes the named tensor's table entry with this data offset instead of the one due (malformed files).
  Gguf& wrong_offset(const std::string& name, std::uint64_t offset) {
    for (auto& t : tensors)
      if (t.name == name) t.offset = offset;
    return *this;
  }

  std::vector<std::uint8_t> write() const {
    Bytes b;
    b.put_bytes("GGUF", 4);
    b.put<std::uint32_t>(3);
    b.put<std::uint64_t>(tensors.size());
    b.put<std::uint64_t>(kv.size());
    for (const auto& [k, v] : kv) {
      b.str(k);
      if (const auto* u = std::get_if<std::uint32_t>(&v)) {
        b.put<std::uint32_t>(4);
        b.put(*u);
      } else if (const auto* f = std::get_if<float>(&v)) {
        b.put<std::uint32_t>(6);
        b.put(*f);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        b.put<std::uint32_t>(8);
        b.str(*s);
      } else if (const auto* af = std::get_if<std::vector<float>>(&v)) {
        b.put<std::uint32_t>(9);
        b.put<std::uint32_t>(6);
        b.put<std::uint64_t>(af->size());
        for (float x : *af) b.put(x);
      } else if (const auto* ai = std::get_if<std::vector<std::int32_t>>(&v)) {
        b.put<std::uint32_t>(9);
        b.put<std::uint32_t>(5);
        b.put<std::uint64_t>(ai->size());
        for (std::int32_t x : *ai) b.put(x);
      } else {
        const auto& as = std::get<std::vector<std::string>>(v);
        b.put<std::uint32_t>(9);
        b.put<std::uint32_t>(8);
        b.put<std::uint64_t>(as.size());
        for (const auto& x : as) b.str(x);
      }
    }
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> offsets;
    for (const auto& t : tensors) {
      b.str(t.name);
      b.put<std::uint32_t>(static_cast<std::uint32_t>(t.ne.size()));
      for (auto d : t.ne) b.put(d);
      b.put(t.type);
      b.put(t.offset.value_or(offset));
      offsets.push_back(offset);
      offset += (t.bytes.size() + 31) / 32 * 32;
    }
    while (b.data.size() % 32 != 0) b.data.push_back(0);
    for (const auto& t : tensors) {
      b.put_bytes(t.bytes.data(), t.bytes.size());
      while (b.data.size() % 32 != 0) b.data.push_back(0);
    }
    return b.data;
  }
};

// safetensors: tensors given as raw little-endian bytes with a dtype name.
struct Safetensors {
  struct Tensor {
    std::string name, dtype;
    std::vector<std::uint64_t> shape;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Tensor> tensors;

  Safetensors& add(const std::string& name, const std::string& dtype, std::vector<std::uint64_t> shape,
                   std::vector<std::uint8_t> bytes) {
    tensors.push_back({name, dtype, std::move(shape), std::move(bytes)});
    return *this;
  }
  Safetensors& f32(const std::string& name, std::vector<std::uint64_t> shape, const std::vector<float>& v) {
    std::vector<std::uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return add(name, "F32", std::move(shape), std::move(b));
  }

  std::vector<std::uint8_t> write() const {
    nlohmann::json h = nlohmann::json::object();
    h["__metadata__"] = {{"format", "pt"}};
    std::uint64_t at = 0;
    for (const auto& t : tensors) {
      h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.bytes.size()}}};
      at += t.bytes.size();
    }
    std::string text = h.dump();
    while ((8 + text.size()) % 8 != 0) text.push_back(' ');
    Bytes b;
    b.put<std::uint64_t>(text.size());
    b.put_bytes(text.data(), text.size());
    for (const auto& t : tensors) b.put_bytes(t.bytes.data(), t.bytes.size());
    return b.data;
  }
};

// .npy format 1.0 with descr and shape (r, c).
inline std::vector<std::uint8_t> npy(const std::string& descr, std::uint64_t rows, std::uint64_t cols,
                                     const std::vector<std::uint8_t>& bytes, bool fortran = false) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (" +
                  std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + h.size() + 1) % 64 != 0) h.push_back(' ');
  h.push_back('\n');
  Bytes b;
  b.put_bytes("\x93NUMPY", 6);
  b.put<std::uint8_t>(1);
  b.put<std::uint8_t>(0);
  b.put<std::uint16_t>(static_cast<std::uint16_t>(h.size()));
  b.put_bytes(h.data(), h.size());
  b.put_bytes(bytes.data(), bytes.size());
  return b.data;
}

}  // namespace test_files
