// AdamW with a warm-up + cosine learning-rate schedule and a global gradient-norm clip — the
// decoupled form of Loshchilov & Hutter 2019, with PyTorch's bias corrections and clip rule.
#include <cmath>
#include <new>

#include "lab/model.hpp"

namespace posenc::lab {

double learning_rate(const Schedule& s, std::size_t step) noexcept {
  constexpr double kPi = 3.14159265358979323846;
  if (step < s.warmup_steps) return s.peak_lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  const double floor = s.final_fraction * s.peak_lr;
  const std::size_t span = s.total_steps > s.warmup_steps + 1 ? s.total_steps - s.warmup_steps - 1 : 0;
  if (span == 0 || step >= s.warmup_steps + span) return floor;
  const double progress = static_cast<double>(step - s.warmup_steps) / static_cast<double>(span);
  return floor + (s.peak_lr - floor) * 0.5 * (1.0 + std::cos(kPi * progress));
}

Status lr_check(double lr) noexcept {
  if (!(std::isfinite(lr) && lr >= 0.0)) return {StatusCode::kBadArgument, "lr must be finite and >= 0"};
  return Status::Ok();
}

Status Model::train_step(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, double lr, float* loss,
                         float* grad_norm, const StepOptions& options) noexcept {
  if (Status s = lr_check(lr); !s.ok()) return s;
  if (Status s = loss_and_gradients(tokens, batch, seq_len, loss, options); !s.ok()) return s;
  Impl& m = *impl_;

  // Global norm over every gradient; scale by max_norm / (norm + 1e-6) when above max_norm.
  double sq = 0.0;
  for (float g : m.grads) sq += static_cast<double>(g) * g;
  const double norm = std::sqrt(sq);
  if (grad_norm != nullptr) *grad_norm = static_cast<float>(norm);
  const float clip = norm > kGradClip ? static_cast<float>(kGradClip / (norm + 1e-6)) : 1.0f;

  ++m.steps;
  const double t = static_cast<double>(m.steps);
  const float b1 = static_cast<float>(kAdamBeta1), b2 = static_cast<float>(kAdamBeta2);
  const float step_size = static_cast<float>(lr / (1.0 - std::pow(kAdamBeta1, t)));
  const float sqrt_bc2 = static_cast<float>(std::sqrt(1.0 - std::pow(kAdamBeta2, t)));
  const float eps = static_cast<float>(kAdamEps);
  for (const detail::Tensor& ten : m.tensors) {
    const std::size_t n = ten.rows * ten.cols;
    float* p = m.params.data() + ten.offset;
    const float* g = m.grads.data() + ten.offset;
    float* mo = m.adam_m.data() + ten.offset;
    float* ve = m.adam_v.data() + ten.offset;
    const float decay = ten.decay ? static_cast<float>(1.0 - lr * kWeightDecay) : 1.0f;
    for (std::size_t i = 0; i < n; ++i) {
      const float gi = g[i] * clip;
      mo[i] = b1 * mo[i] + (1.0f - b1) * gi;
      ve[i] = b2 * ve[i] + (1.0f - b2) * gi * gi;
      p[i] = p[i] * decay - step_size * mo[i] / (std::sqrt(ve[i]) / sqrt_bc2 + eps);
    }
  }
  return Status::Ok();
}

}  // namespace posenc::lab
