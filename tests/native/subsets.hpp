// The suite's subsets (main.cpp). A case whose results may depend on the SIMD target or the thread
// count — it runs a kernel or the thread pool, which work_probe.hpp records — is in test suite
// "kernels": TEST_CASE("…" * kKernels). Those cases run again on every lesser SIMD target, on two
// threads and under ThreadSanitizer; the others run once, natively and as WASM. A case that uses
// the kernels or the pool without kKernels fails the run.
#pragma once

#include <doctest/doctest.h>

constexpr const char* kKernelsSuite = "kernels";
inline const doctest::test_suite kKernels(kKernelsSuite);
