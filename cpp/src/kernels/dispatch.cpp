// Picks the kernels of the best SIMD target this CPU runs, once. The library holds one copy of the
// kernels per target CMake built (POSENC_HAVE_KERNELS_*); $POSENC_SIMD=name forces one (tests
// run the suite on every target the machine supports).
#include <xsimd/xsimd.hpp>

#include <cstdlib>
#include <cstring>

#include "kernels/table.hpp"
#include "work_probe.hpp"

namespace posenc::probe {
std::atomic<bool> g_marked{false};
}  // namespace posenc::probe

namespace posenc::kernels {

#define POSENC_TARGET(ns)          \
  namespace ns {                   \
  extern const KernelTable kTable; \
  }
#include "kernels/targets.inc"
#undef POSENC_TARGET

std::size_t kernel_targets(KernelTarget* out, std::size_t max) noexcept {
  std::size_t n = 0;
  auto add = [&](const KernelTable& t, bool supported) {
    if (n < max) out[n] = {&t, supported};
    ++n;
  };
#ifdef POSENC_HAVE_KERNELS_BASELINE
  add(baseline::kTable, true);
#endif
#ifdef POSENC_HAVE_KERNELS_X86
  const auto cpu = xsimd::available_architectures();
  add(sse2::kTable, cpu.sse2);
  add(sse4_2::kTable, cpu.sse4_2);
  add(avx2::kTable, cpu.fma3_avx2);
  add(avx512f::kTable, cpu.avx512f);
#endif
  return n;
}

const KernelTable& kernel_table() noexcept {
  static const KernelTable* chosen = [] {
    KernelTarget targets[8];
    const std::size_t n = kernel_targets(targets, 8);
    const KernelTable* best = targets[0].table;
    for (std::size_t i = 0; i < n && i < 8; ++i)
      if (targets[i].supported) best = targets[i].table;
    if (const char* want = std::getenv("POSENC_SIMD"); want != nullptr && *want != '\0')
      for (std::size_t i = 0; i < n && i < 8; ++i)
        if (targets[i].supported && std::strcmp(targets[i].table->arch, want) == 0) best = targets[i].table;
    return best;
  }();
  probe::mark();
  return *chosen;
}

}  // namespace posenc::kernels
