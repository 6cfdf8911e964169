// Reading a ByteSource: a cursor over little-endian values whose every read is checked against
// the file size first, and errors that name the byte offset and what was expected there.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/model_file.hpp"

namespace posenc::file {

// The first failure of a read, kept for the caller's Status and detail text.
struct Failure {
  StatusCode code = StatusCode::kOk;
  std::string detail;
};

class Cursor {
 public:
  Cursor(const ByteSource& src, const char* what) : src_(src), what_(what) {}

  std::uint64_t offset() const { return at_; }
  std::uint64_t remaining() const { return at_ <= src_.size ? src_.size - at_ : 0; }
  void seek(std::uint64_t offset) { at_ = offset; }
  bool failed() const { return failure_.code != StatusCode::kOk; }
  const Failure& failure() const { return failure_; }

  // Records a malformed-file failure at the current offset (the first one wins).
  bool fail(const std::string& expected) { return fail_at(at_, expected); }
  bool fail_at(std::uint64_t offset, const std::string& expected) {
    if (!failed())
      failure_ = {StatusCode::kBadArgument,
                  std::string(what_) + ": at byte " + std::to_string(offset) + ": " + expected};
    return false;
  }

  // Whether n more bytes are in the file; a failure naming what was expected if not.
  bool room(std::uint64_t n, const char* expected) {
    if (failed()) return false;
    if (n <= remaining()) return true;
    return fail("the file is truncated: expected " + std::string(expected) + " (" + std::to_string(n) +
                " bytes), but it ends " + std::to_string(remaining()) + " bytes later, at byte " +
                std::to_string(src_.size));
  }

  // Reads n bytes at the cursor into dst; false (with a failure) past the end of the file.
  bool bytes(void* dst, std::uint64_t n, const char* expected) {
    if (!room(n, expected)) return false;
    if (n != 0 && !src_.read(src_.user, at_, static_cast<std::size_t>(n), static_cast<std::uint8_t*>(dst))) {
      failure_ = {StatusCode::kUnavailable, std::string(what_) + ": bytes " + std::to_string(at_) + " … " +
                                                std::to_string(at_ + n) + " could not be read"};
      return false;
    }
    at_ += n;
    return true;
  }
  bool skip(std::uint64_t n, const char* expected) {
    if (!room(n, expected)) return false;
    at_ += n;
    return true;
  }

  template <class T>
  bool value(T* out, const char* expected) {
    std::uint8_t b[sizeof(T)];
    if (!bytes(b, sizeof(T), expected)) return false;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    if constexpr (sizeof(T) == 1) {
      std::memcpy(out, b, 1);
    } else {
      using U = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                   std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
      const U u = static_cast<U>(v);
      std::memcpy(out, &u, sizeof(T));
    }
    return true;
  }

  // A string of n bytes; n is checked against the file size before anything is allocated.
  bool string(std::uint64_t n, std::string* out, const char* expected) {
    if (failed()) return false;
    if (n > remaining())
      return fail("the file is truncated: " + std::string(expected) + " of " + std::to_string(n) +
                  " bytes is longer than the " + std::to_string(remaining()) + " bytes left in it");
    out->resize(static_cast<std::size_t>(n));
    return bytes(out->data(), n, expected);
  }

 private:
  const ByteSource& src_;
  const char* what_;
  std::uint64_t at_ = 0;
  Failure failure_;
};

// bfloat16 bit patterns → float32 (exact; NaN and infinities kept). float16: half.hpp.
float bfloat16_to_float(std::uint16_t b) noexcept;

enum class Dtype { kF32, kF16, kBF16, kF64 };

// Reads count elements of dtype at offset (absolute) as float32 into out.
bool read_floats(const ByteSource& src, std::uint64_t offset, std::uint64_t count, Dtype dtype, std::vector<float>* out,
                 Failure* failure, const char* what);

Status status_of(const Failure& f, std::string* detail);

}  // namespace posenc::file
