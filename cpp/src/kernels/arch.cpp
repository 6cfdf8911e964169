// The table of this SIMD target's kernels (one per POSENC_KERNEL_ID, see target.hpp).
#include "kernels/table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

void sinusoidal_interleaved(float*, const double*, std::size_t, std::size_t, const double*) noexcept;
void sinusoidal_concat(float*, const double*, std::size_t, std::size_t, const double*) noexcept;
void rope_tables(float*, float*, std::size_t, double, const double*, const float*, Precision, float) noexcept;
void rope_tables_ggml(float*, float*, std::size_t, double, const GgmlAngles&) noexcept;
void rope_expand_interleaved(const float*, const float*, std::size_t, float*, float*) noexcept;
void rope_rotate_half_split(float*, std::size_t, std::size_t, std::size_t, const float*, const float*) noexcept;
void rope_rotate_interleaved(float*, std::size_t, std::size_t, std::size_t, const float*, const float*) noexcept;
void dot_keys(float*, const float*, const float*, std::size_t, std::size_t, std::size_t, float) noexcept;
void softmax_block(float*, std::size_t, const float*, std::size_t, std::size_t, float*, float*, float*) noexcept;
void transpose_keys(float*, const float*, std::size_t, std::size_t, std::size_t) noexcept;
void widen_half(float*, const std::uint16_t*, std::size_t) noexcept;
void widen_transpose_keys(float*, const std::uint16_t*, std::size_t, std::size_t, std::size_t) noexcept;
void scores_tile(float*, std::size_t, const float* const*, const float*, std::size_t, std::size_t, float) noexcept;
void softmax_tile(float*, std::size_t, std::size_t, const float*, std::size_t, std::size_t, float*, float*, float*) noexcept;

extern const KernelTable kTable;
const KernelTable kTable = {
    Arch::name(),        sinusoidal_interleaved, sinusoidal_concat, rope_tables, rope_tables_ggml,
    rope_expand_interleaved, rope_rotate_half_split, rope_rotate_interleaved, dot_keys,
    softmax_block,       transpose_keys,         widen_half,        widen_transpose_keys,
    scores_tile,         softmax_tile,
};

}  // namespace posenc::kernels::POSENC_KERNEL_NS
