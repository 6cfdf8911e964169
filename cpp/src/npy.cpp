// NumPy .npy (format 1.0, 2.0, 3.0): "\x93NUMPY", major, minor, a header length (u16 for 1.x,
// u32 after), a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (r, c), }
// padded with spaces, then the data. A 2-D float array is read as a learned position table.
#include <cctype>

#include "file_bytes.hpp"
#include "posenc/model_file.hpp"

namespace posenc {
namespace {

Status npy_fail(std::string* detail, const std::string& why) {
  if (detail != nullptr) *detail = "npy: " + why;
  return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
}

// The text after 'key': in the header dict, or npos.
std::size_t value_of(const std::string& h, const char* key) {
  const std::string k = std::string("'") + key + "'";
  std::size_t at = h.find(k);
  if (at == std::string::npos) return at;
  at = h.find(':', at + k.size());
  if (at == std::string::npos) return at;
  ++at;
  while (at < h.size() && h[at] == ' ') ++at;
  return at;
}

// The header's 'shape' tuple: whole numbers, at most 8 of them, each at most 2^40.
Status parse_shape(const std::string& h, std::vector<std::uint64_t>* shape, std::string* detail) {
  std::size_t at = value_of(h, "shape");
  if (at == std::string::npos || at >= h.size() || h[at] != '(')
    return npy_fail(detail, "the header has no 'shape' tuple");
  ++at;
  while (at < h.size() && h[at] != ')') {
    if (h[at] == ' ' || h[at] == ',') {
      ++at;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(h[at]))) return npy_fail(detail, "'shape' must hold whole numbers");
    std::uint64_t v = 0;
    while (at < h.size() && std::isdigit(static_cast<unsigned char>(h[at]))) {
      if (v > (std::uint64_t{1} << 40)) return npy_fail(detail, "a 'shape' entry is too large");
      v = v * 10 + static_cast<std::uint64_t>(h[at++] - '0');
    }
    shape->push_back(v);
    if (shape->size() > 8) return npy_fail(detail, "'shape' has more than 8 dimensions");
  }
  if (at >= h.size()) return npy_fail(detail, "the header's 'shape' tuple is not closed");
  return Status::Ok();
}

}  // namespace

Status read_npy(const ByteSource& src, ModelInfo* out, std::string* detail, const ReadOptions& options) noexcept {
  if (out == nullptr || src.read == nullptr) return {StatusCode::kBadArgument, "out and src.read must not be null"};
  try {
    file::Cursor c(src, "npy");
    std::uint8_t magic[6], major = 0, minor = 0;
    if (c.bytes(magic, 6, "the magic \\x93NUMPY") && std::memcmp(magic, "\x93NUMPY", 6) != 0)
      return npy_fail(detail, "at byte 0: expected the magic \\x93NUMPY");
    c.value(&major, "the major version");
    c.value(&minor, "the minor version");
    if (!c.failed() && (major < 1 || major > 3))
      return npy_fail(detail, "at byte 6: expected format version 1, 2 or 3, got " + std::to_string(major));
    std::uint64_t header_len = 0;
    if (major == 1) {
      std::uint16_t n = 0;
      c.value(&n, "the header length");
      header_len = n;
    } else {
      std::uint32_t n = 0;
      c.value(&n, "the header length");
      header_len = n;
    }
    if (header_len > (1u << 16))  // numpy's own reader refuses headers over 10000 bytes
      return npy_fail(detail, "at byte 8: a header of " + std::to_string(header_len) +
                                  " bytes is longer than the 65536 this reader accepts");
    std::string h;
    c.string(header_len, &h, "the header");
    if (c.failed()) return file::status_of(c.failure(), detail);
    const std::uint64_t data_start = c.offset();

    std::size_t at = value_of(h, "descr");
    if (at == std::string::npos || at >= h.size() || (h[at] != '\'' && h[at] != '"'))
      return npy_fail(detail, "the header has no 'descr' string");
    const std::size_t close = h.find(h[at], at + 1);
    if (close == std::string::npos) return npy_fail(detail, "the header's 'descr' string is not closed");
    const std::string descr = h.substr(at + 1, close - at - 1);
    file::Dtype dtype;
    std::uint64_t width;
    if (descr == "<f4") {
      dtype = file::Dtype::kF32;
      width = 4;
    } else if (descr == "<f2") {
      dtype = file::Dtype::kF16;
      width = 2;
    } else if (descr == "<f8") {
      dtype = file::Dtype::kF64;
      width = 8;
    } else
      return npy_fail(
          detail, "dtype '" + descr + "' is not one of '<f4', '<f2', '<f8' (little-endian float32, float16, float64)");

    at = value_of(h, "fortran_order");
    if (at == std::string::npos) return npy_fail(detail, "the header has no 'fortran_order'");
    const bool fortran = h.compare(at, 4, "True") == 0;
    if (!fortran && h.compare(at, 5, "False") != 0) return npy_fail(detail, "'fortran_order' must be True or False");

    std::vector<std::uint64_t> shape;
    if (Status s = parse_shape(h, &shape, detail); !s.ok()) return s;

    ModelInfo info;
    info.format = ModelFormat::kNpy;
    info.tensors.push_back({"", descr == "<f4" ? "F32" : descr == "<f2" ? "F16" : "F64", shape});
    if (shape.size() != 2)
      return npy_fail(detail, "a position table is 2-D [max_len, d_model]; this array has " +
                                  std::to_string(shape.size()) + " dimensions");
    const std::uint64_t rows = shape[0], cols = shape[1];
    if (rows == 0 || cols == 0) return npy_fail(detail, "a position table needs rows and columns (shape has a 0)");
    if (cols != 0 && rows > options.max_table_floats / cols) {
      if (detail != nullptr)
        *detail = "npy: the array holds more than " + std::to_string(options.max_table_floats) + " values";
      return {StatusCode::kTooLarge, "model file: a table is too large"};
    }
    if (rows * cols * width > src.size - data_start)
      return npy_fail(detail, "at byte " + std::to_string(data_start) + ": shape (" + std::to_string(rows) + ", " +
                                  std::to_string(cols) + ") needs " + std::to_string(rows * cols * width) +
                                  " bytes, the file has " + std::to_string(src.size - data_start) +
                                  " after the header");
    PositionTable table{"", static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), {}};
    file::Failure failure;
    std::vector<float> raw;
    if (!file::read_floats(src, data_start, rows * cols, dtype, fortran ? &raw : &table.weights, &failure, "npy"))
      return file::status_of(failure, detail);
    if (fortran) {  // column-major on disk: transpose to [rows][cols]
      table.weights.resize(raw.size());
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t k = 0; k < cols; ++k) table.weights[r * cols + k] = raw[k * rows + r];
    }
    info.position_table = std::move(table);
    *out = std::move(info);
    return Status::Ok();
  } catch (...) {  // std::bad_alloc
    return {StatusCode::kTooLarge, "model file: out of memory"};
  }
}

}  // namespace posenc
