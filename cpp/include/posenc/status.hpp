// posenc: status codes. The C++ API never throws; every fallible function returns a Status.
#pragma once

namespace posenc {

enum class StatusCode : int {
  kOk = 0,
  kBadArgument,  // a scalar argument breaks its rule (non-finite base, zero size, ...)
  kBadShape,     // extents that do not fit together
  kTooLarge,     // the result would not fit in memory (or in size_t)
  kUnavailable,  // a ByteSource could not supply bytes a reader asked for (model_file.hpp)
};

// `message` is a static string that names the argument (snake_case, as in the C++ API) and the
// rule it broke, e.g. "d_model must be > 0". It is "" when ok().
struct Status {
  StatusCode code = StatusCode::kOk;
  const char* message = "";

  constexpr bool ok() const noexcept { return code == StatusCode::kOk; }
  static constexpr Status Ok() noexcept { return {}; }
};

// "ok", "bad_argument", "bad_shape", "too_large", "unavailable".
const char* status_code_name(StatusCode code) noexcept;

}  // namespace posenc
