// Internal: an argument refused, as every check in the library and the lab returns it.
#pragma once

#include "posenc/status.hpp"

namespace posenc {

// message is a string literal: Status keeps the pointer.
inline Status bad(const char* message) { return {StatusCode::kBadArgument, message}; }

}  // namespace posenc
