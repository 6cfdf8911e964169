// The table of this SIMD target's lab kernels (one per POSENC_KERNEL_ID, see target.hpp).
#include "kernels/lab_table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {

void lab_gemm(float*, std::size_t, const float*, std::size_t, std::size_t, const float*, std::size_t,
              std::size_t, std::size_t, std::size_t, bool) noexcept;
void lab_gemm_nt(float*, std::size_t, const float*, std::size_t, const float*, std::size_t, std::size_t,
                 std::size_t, std::size_t, bool) noexcept;
float lab_softmax(float*, std::size_t) noexcept;
void lab_softmax_backward(float*, const float*, const float*, std::size_t) noexcept;
void lab_layernorm(float*, float*, float*, const float*, const float*, const float*, std::size_t,
                   std::size_t, float) noexcept;
void lab_layernorm_backward(float*, float*, float*, const float*, const float*, const float*,
                            const float*, const float*, std::size_t, std::size_t) noexcept;
void lab_gelu(float*, const float*, std::size_t) noexcept;
void lab_gelu_backward(float*, const float*, const float*, std::size_t) noexcept;
void lab_rope(float*, std::size_t, std::size_t, std::size_t, std::size_t, const float*, const float*,
              bool) noexcept;

extern const LabKernelTable kLabTable;
const LabKernelTable kLabTable = {
    Arch::name(), lab_gemm,          lab_gemm_nt, lab_softmax, lab_softmax_backward, lab_layernorm,
    lab_layernorm_backward, lab_gelu, lab_gelu_backward, lab_rope,
};

}  // namespace posenc::kernels::POSENC_KERNEL_NS
