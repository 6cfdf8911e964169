// Fuzz target: .npy files (magic and version 1.0 prefixed): header dict, table data. Nothing may crash, allocate
// beyond the file's size, or fail without saying why; what parses is consistent.
#include "model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_model_file(data, size, "\x93NUMPY\x01\0", 8, &posenc::read_npy);
}
