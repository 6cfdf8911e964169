#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "conformance.hpp"

int main(int argc, char** argv) {
  if (!posenc::test::conformance_available())
    std::printf("conformance: SKIPPED, no ONNX vectors at %s/onnx (set POSENC_CONFORMANCE_DIR); "
                "the project's own tests still run\n", posenc::test::conformance_dir().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
