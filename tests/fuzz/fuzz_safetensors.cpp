// Fuzz target: safetensors files: header length, JSON header, position tensors. Nothing may crash, allocate
// beyond the file's size, or fail without saying why; what parses is consistent.
#include "model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_model_file(data, size, "", 0, &posenc::read_safetensors);
}
