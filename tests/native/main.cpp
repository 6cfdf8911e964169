#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "posenc/threads.hpp"
#include "subsets.hpp"
#include "work_probe.hpp"

// Options of this suite, taken out of argv before doctest parses the rest:
//   --posenc-threads=N       runs with set_num_threads(N) (ctest doctest_threads2, the TSan run)
//   --posenc-subset=kernels  runs only the cases of test suite "kernels": those whose results may
//                            depend on the SIMD target or the thread count. The lesser SIMD targets,
//                            the two-thread runs and TSan take this subset; the full run takes
//                            every case, natively on the best target and as WASM.
// In every run, a case outside test suite "kernels" that runs a SIMD kernel or the thread pool
// (work_probe.hpp) fails the run: it would otherwise be checked on one target and one thread only.

namespace {

std::vector<std::string> g_unmarked;  // cases that used the kernels or the pool outside the suite

struct ProbeListener : doctest::IReporter {
  const doctest::TestCaseData* tc = nullptr;
  explicit ProbeListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    tc = &data;
    posenc::probe::take();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {
    if (posenc::probe::take() && tc != nullptr && std::strcmp(tc->m_test_suite, kKernelsSuite) != 0)
      g_unmarked.push_back(std::string(tc->m_name) + " (" + tc->m_file.c_str() + ":" + std::to_string(tc->m_line) +
                           ")");
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("posenc_probe", 1, ProbeListener);

bool take_option(const char* arg, const char* name, const char** value) {
  if (std::strncmp(arg, name, std::strlen(name)) != 0) return false;
  *value = arg + std::strlen(name);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool subset = false;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    const char* value = nullptr;
    if (i > 0 && take_option(argv[i], "--posenc-threads=", &value)) {
      if (const posenc::Status s = posenc::set_num_threads(std::atoi(value)); !s.ok()) {
        std::fprintf(stderr, "%s: %s\n", argv[i], s.message);
        return 2;
      }
      continue;
    }
    if (i > 0 && take_option(argv[i], "--posenc-subset=", &value)) {
      if (std::strcmp(value, kKernelsSuite) != 0) {
        std::fprintf(stderr, "%s: the only subset is %s\n", argv[i], kKernelsSuite);
        return 2;
      }
      subset = true;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  std::printf("posenc threads: %d\n", posenc::num_threads());
  if (subset)
    std::printf(
        "posenc subset: %s, the cases whose results may depend on the SIMD target or the thread count; "
        "doctest counts the others as skipped: they run in the full run (natively and as WASM)\n",
        kKernelsSuite);
  else std::printf("posenc subset: every case\n");
  if (!posenc::test::conformance_available())
    std::printf(
        "conformance: SKIPPED, no ONNX vectors at %s/onnx (set POSENC_CONFORMANCE_DIR); "
        "the project's own tests still run\n",
        posenc::test::conformance_dir().c_str());
  doctest::Context context(argc, argv);
  if (subset) context.setOption("test-suite", kKernelsSuite);
  const int rc = context.run();
  for (const std::string& name : g_unmarked)
    std::printf(
        "posenc probe: FAILED: %s runs SIMD kernels or the thread pool but is not in test suite \"%s\" "
        "(add * kKernels to it, subsets.hpp: else it is checked on one target only)\n",
        name.c_str(), kKernelsSuite);
  return rc != 0 ? rc : g_unmarked.empty() ? 0 : 1;
}
