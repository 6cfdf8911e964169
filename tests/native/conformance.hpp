// Where the shared ONNX conformance vectors are: $POSENC_CONFORMANCE_DIR, else ../shared/conformance
// next to the repository. They are third-party data, read in place and never copied here.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace posenc::test {

inline std::string conformance_dir() {
  if (const char* env = std::getenv("POSENC_CONFORMANCE_DIR"); env != nullptr && *env != '\0') return env;
  return std::string(POSENC_SOURCE_DIR) + "/../shared/conformance";
}

inline bool conformance_available() { return std::ifstream(conformance_dir() + "/onnx/test_attention_4d.json").good(); }

}  // namespace posenc::test
