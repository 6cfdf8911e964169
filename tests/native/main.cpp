#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "conformance.hpp"
#include "posenc/threads.hpp"

// --posenc-threads=N runs the whole suite with set_num_threads(N) (ctest doctest_threads2); it is
// taken out of argv before doctest parses the rest.
int main(int argc, char** argv) {
  constexpr const char* kThreads = "--posenc-threads=";
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], kThreads, std::strlen(kThreads)) == 0) {
      const int n = std::atoi(argv[i] + std::strlen(kThreads));
      if (const posenc::Status s = posenc::set_num_threads(n); !s.ok()) {
        std::fprintf(stderr, "%s: %s\n", argv[i], s.message);
        return 2;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  std::printf("posenc threads: %d\n", posenc::num_threads());
  if (!posenc::test::conformance_available())
    std::printf("conformance: SKIPPED, no ONNX vectors at %s/onnx (set POSENC_CONFORMANCE_DIR); "
                "the project's own tests still run\n", posenc::test::conformance_dir().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
