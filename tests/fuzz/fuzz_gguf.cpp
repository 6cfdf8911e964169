// Fuzz target: GGUF files (v3 header prefixed): metadata, tensor table, small tensors. Nothing may crash, allocate
// beyond the file's size, or fail without saying why; what parses is consistent.
#include "model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_model_file(data, size, "GGUF\x03\0\0\0", 8, &posenc::read_gguf);
}
