// Statuses at the Embind boundary: a call returns the message ("" = ok) and the binding keeps the
// code of the last failed status, which the JS layer reads (lastStatusCode) and puts on the error
// it throws as err.code ('kBadShape', ...), so a kTooLarge and a kBadShape stay told apart in JS.
#pragma once

#include <string>

#include "posenc/status.hpp"

namespace posenc_js {

inline posenc::StatusCode& last_status_code() {
  static posenc::StatusCode code = posenc::StatusCode::kOk;  // calls come from the main thread only
  return code;
}

inline std::string message(const posenc::Status& s) {
  if (s.ok()) return std::string();
  last_status_code() = s.code;
  return s.message;
}

}  // namespace posenc_js
