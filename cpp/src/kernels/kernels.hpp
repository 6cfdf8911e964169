// The kernel entry points the rest of the library calls: each forwards to the table of the SIMD
// target chosen at run time (kernels/dispatch.cpp). Callers (cpp/src/*.cpp) have already checked
// every shape and argument. Not included by the kernel files themselves (see target.hpp).
#pragma once

#include "kernels/table.hpp"

namespace posenc::kernels {

inline const char* arch_name() noexcept { return kernel_table().arch; }

template <class... A> inline void sinusoidal_interleaved(A... a) noexcept { kernel_table().sinusoidal_interleaved(a...); }
template <class... A> inline void sinusoidal_concat(A... a) noexcept { kernel_table().sinusoidal_concat(a...); }
template <class... A> inline void rope_tables(A... a) noexcept { kernel_table().rope_tables(a...); }
template <class... A> inline void rope_tables_ggml(A... a) noexcept { kernel_table().rope_tables_ggml(a...); }
template <class... A> inline void rope_expand_interleaved(A... a) noexcept { kernel_table().rope_expand_interleaved(a...); }
template <class... A> inline void rope_rotate_half_split(A... a) noexcept { kernel_table().rope_rotate_half_split(a...); }
template <class... A> inline void rope_rotate_interleaved(A... a) noexcept { kernel_table().rope_rotate_interleaved(a...); }
template <class... A> inline void dot_keys(A... a) noexcept { kernel_table().dot_keys(a...); }
template <class... A> inline void softmax_block(A... a) noexcept { kernel_table().softmax_block(a...); }
template <class... A> inline void transpose_keys(A... a) noexcept { kernel_table().transpose_keys(a...); }
template <class... A> inline void widen_half(A... a) noexcept { kernel_table().widen_half(a...); }
template <class... A> inline void widen_transpose_keys(A... a) noexcept { kernel_table().widen_transpose_keys(a...); }
template <class... A> inline void scores_tile(A... a) noexcept { kernel_table().scores_tile(a...); }
template <class... A> inline void softmax_tile(A... a) noexcept { kernel_table().softmax_tile(a...); }

}  // namespace posenc::kernels
