// Model files: telling the formats apart, and the byte-level helpers the readers share.
#include "posenc/model_file.hpp"

#include <algorithm>
#include <cstring>

#include "file_bytes.hpp"
#include "half.hpp"

namespace posenc {
namespace file {

float bfloat16_to_float(std::uint16_t b) noexcept {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool read_floats(const ByteSource& src, std::uint64_t offset, std::uint64_t count, Dtype dtype, std::vector<float>* out,
                 Failure* failure, const char* what) {
  const std::uint64_t width = dtype == Dtype::kF32 ? 4 : dtype == Dtype::kF64 ? 8 : 2;
  Cursor c(src, what);
  c.seek(offset);
  if (count > c.remaining() / width) {
    c.fail("expected " + std::to_string(count) + " values of " + std::to_string(width) +
           " bytes, but the file is truncated: it ends " + std::to_string(c.remaining()) + " bytes later");
    *failure = c.failure();
    return false;
  }
  out->resize(static_cast<std::size_t>(count));
  // Read in slices of at most 1 MiB, converting as we go.
  std::vector<std::uint8_t> buf;
  const std::uint64_t per_slice = (std::uint64_t{1} << 20) / width;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(per_slice, count - done);
    buf.resize(static_cast<std::size_t>(n * width));
    if (!c.bytes(buf.data(), n * width, "tensor data")) break;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint8_t* b = buf.data() + i * width;
      float v;
      if (dtype == Dtype::kF32) {
        std::uint32_t u = static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
                          static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
        std::memcpy(&v, &u, 4);
      } else if (dtype == Dtype::kF64) {
        std::uint64_t u = 0;
        for (int k = 0; k < 8; ++k) u |= static_cast<std::uint64_t>(b[k]) << (8 * k);
        double d;
        std::memcpy(&d, &u, 8);
        v = static_cast<float>(d);
      } else {
        const auto u = static_cast<std::uint16_t>(b[0] | b[1] << 8);
        v = dtype == Dtype::kF16 ? half::to_float(u) : bfloat16_to_float(u);
      }
      (*out)[static_cast<std::size_t>(done + i)] = v;
    }
    done += n;
  }
  if (c.failed()) {
    *failure = c.failure();
    out->clear();
    return false;
  }
  return true;
}

Status status_of(const Failure& f, std::string* detail) {
  if (f.code == StatusCode::kOk) return Status::Ok();
  if (detail != nullptr) *detail = f.detail;
  switch (f.code) {
    case StatusCode::kUnavailable: return {StatusCode::kUnavailable, "model file: bytes could not be read"};
    case StatusCode::kTooLarge: return {StatusCode::kTooLarge, "model file: a table is too large"};
    default: return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
  }
}

}  // namespace file

const char* model_format_name(ModelFormat format) noexcept {
  switch (format) {
    case ModelFormat::kGguf: return "gguf";
    case ModelFormat::kSafetensors: return "safetensors";
    case ModelFormat::kNpy: return "npy";
    case ModelFormat::kConfig: return "config";
  }
  return "unknown";
}

namespace {

// Readers only ask for bytes within src.size (Cursor checks), so the data pointer is all it needs.
bool read_memory(void* user, std::uint64_t offset, std::size_t n, std::uint8_t* dst) {
  std::memcpy(dst, static_cast<const std::uint8_t*>(user) + offset, n);
  return true;
}

}  // namespace

ByteSource memory_source(const std::uint8_t* data, std::size_t size) noexcept {
  return {size, const_cast<std::uint8_t*>(data), &read_memory};
}

Status read_model(const ByteSource& src, ModelInfo* out, std::string* detail, const ReadOptions& options) noexcept {
  if (out == nullptr || src.read == nullptr) return {StatusCode::kBadArgument, "out and src.read must not be null"};
  try {
    std::uint8_t head[9] = {};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(src.size, sizeof head));
    if (n == 0) {
      if (detail) *detail = "the file is empty";
      return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
    }
    if (!src.read(src.user, 0, n, head)) {
      if (detail) *detail = "bytes 0 … " + std::to_string(n) + " could not be read";
      return {StatusCode::kUnavailable, "model file: bytes could not be read"};
    }
    if (n >= 4 && std::memcmp(head, "GGUF", 4) == 0) return read_gguf(src, out, detail, options);
    if (n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return read_npy(src, out, detail, options);
    if (n == 9 && head[8] == '{') {
      std::uint64_t len = 0;
      for (int i = 0; i < 8; ++i) len |= static_cast<std::uint64_t>(head[i]) << (8 * i);
      // A header length the format allows (at most 100 MB) is safetensors even past the end of the
      // file: the reader then says it is truncated. Text such as a config.json reads as far more.
      if (len >= 2 && len <= 100'000'000) return read_safetensors(src, out, detail, options);
    }
    std::size_t k = 0;
    while (k < n && (head[k] == ' ' || head[k] == '\n' || head[k] == '\r' || head[k] == '\t')) ++k;
    if (k < n && head[k] == '{') {
      if (src.size > (std::uint64_t{64} << 20)) {
        if (detail)
          *detail =
              "a config.json of " + std::to_string(src.size) + " bytes is larger than the 64 MiB this reader accepts";
        return {StatusCode::kTooLarge, "model file: a table is too large"};
      }
      std::string text(static_cast<std::size_t>(src.size), '\0');
      if (!src.read(src.user, 0, text.size(), reinterpret_cast<std::uint8_t*>(text.data()))) {
        if (detail) *detail = "bytes 0 … " + std::to_string(src.size) + " could not be read";
        return {StatusCode::kUnavailable, "model file: bytes could not be read"};
      }
      return model_info_from_config(text, out, detail);
    }
    if (detail)
      *detail =
          "at byte 0: expected \"GGUF\" (GGUF), \"\\x93NUMPY\" (.npy), a safetensors header length "
          "followed by '{', or a JSON object (config.json)";
    return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
  } catch (...) {  // std::bad_alloc
    return {StatusCode::kTooLarge, "model file: out of memory"};
  }
}

}  // namespace posenc
