/* The lab's element-wise and row-wise kernels (cpp/lab/forward.cpp).

   softmax:           m = max s;  p_j = exp(s_j - m) / Σ exp(s - m);  returns m + log Σ exp(s - m)
   softmax_backward:  ds_j = p_j (dp_j - Σ_i p_i dp_i)
   layernorm:         per row x[d]: μ = Σx/d, σ² = Σ(x - μ)²/d (two passes), r = 1/√(σ² + eps),
                      y = (x - μ) r w + b; μ and r are kept for the backward pass
   layernorm_backward: x̂ = (x - μ) r, g = dy w:  dx += r (g - mean(g) - x̂ mean(g x̂)),
                      dw += dy x̂, db += dy (summed over rows)
   gelu (tanh form):  y = x (1 + tanh u) / 2,  u = √(2/π) (x + 0.044715 x³)
   gelu_backward:     dx = dy [(1 + tanh u) / 2 + x (1 - tanh² u) √(2/π) (1 + 3·0.044715 x²) / 2]
   rope (half-split): per head, the pair (x_k, x_{k+h}), h = head_dim/2, with c = cos[row][k],
                      s = sin[row][k]:  R: (x_k c - x_{k+h} s, x_{k+h} c + x_k s);
                      Rᵀ (transpose): (x_k c + x_{k+h} s, x_{k+h} c - x_k s)
   Vector loops of N = batch<float>::size lanes, then a scalar tail; float32 throughout. */

#include <cmath>

#include "lab/kernels/lab_table.hpp"
#include "kernels/target.hpp"

namespace posenc::kernels::POSENC_KERNEL_NS {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

float sum(const float* x, std::size_t n) {
  batch acc(0.0f);
  std::size_t i = 0;
  for (; i + N <= n; i += N) acc += batch::load_unaligned(x + i);
  float s = xsimd::reduce_add(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

}  // namespace

float lab_softmax(float* s, std::size_t n) noexcept {
  std::size_t j = 0;
  const std::size_t n_vec = n - n % N;
  float m = s[0];
  if (n_vec > 0) {
    batch mv = batch::load_unaligned(s);
    for (j = N; j < n_vec; j += N) mv = xsimd::max(mv, batch::load_unaligned(s + j));
    m = xsimd::reduce_max(mv);
  }
  for (j = n_vec; j < n; ++j) m = s[j] > m ? s[j] : m;
  const batch mb(m);
  batch acc(0.0f);
  for (j = 0; j < n_vec; j += N) {
    const batch e = xsimd::exp(batch::load_unaligned(s + j) - mb);
    e.store_unaligned(s + j);
    acc += e;
  }
  float total = xsimd::reduce_add(acc);
  for (j = n_vec; j < n; ++j) {
    s[j] = ::expf(s[j] - m);
    total += s[j];
  }
  const float inv = 1.0f / total;
  const batch ib(inv);
  for (j = 0; j < n_vec; j += N) (batch::load_unaligned(s + j) * ib).store_unaligned(s + j);
  for (j = n_vec; j < n; ++j) s[j] *= inv;
  return m + ::logf(total);
}

void lab_softmax_backward(float* ds, const float* p, const float* dp, std::size_t n) noexcept {
  batch acc(0.0f);
  std::size_t j = 0;
  const std::size_t n_vec = n - n % N;
  for (; j < n_vec; j += N) acc = xsimd::fma(batch::load_unaligned(p + j), batch::load_unaligned(dp + j), acc);
  float dot = xsimd::reduce_add(acc);
  for (; j < n; ++j) dot += p[j] * dp[j];
  const batch db(dot);
  for (j = 0; j < n_vec; j += N)
    (batch::load_unaligned(p + j) * (batch::load_unaligned(dp + j) - db)).store_unaligned(ds + j);
  for (; j < n; ++j) ds[j] = p[j] * (dp[j] - dot);
}

void lab_layernorm(float* y, float* mean, float* rstd, const float* x, const float* w, const float* b, std::size_t rows,
                   std::size_t d, float eps) noexcept {
  const std::size_t d_vec = d - d % N;
  const float inv_d = 1.0f / static_cast<float>(d);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mu = sum(xr, d) * inv_d;
    const batch mub(mu);
    batch acc(0.0f);
    std::size_t i = 0;
    for (; i < d_vec; i += N) {
      const batch c = batch::load_unaligned(xr + i) - mub;
      acc = xsimd::fma(c, c, acc);
    }
    float var = xsimd::reduce_add(acc);
    for (; i < d; ++i) var += (xr[i] - mu) * (xr[i] - mu);
    var *= inv_d;
    const float rs = 1.0f / ::sqrtf(var + eps);
    mean[r] = mu;
    rstd[r] = rs;
    const batch rb(rs);
    for (i = 0; i < d_vec; i += N)
      xsimd::fma((batch::load_unaligned(xr + i) - mub) * rb, batch::load_unaligned(w + i), batch::load_unaligned(b + i))
          .store_unaligned(yr + i);
    for (; i < d; ++i) yr[i] = (xr[i] - mu) * rs * w[i] + b[i];
  }
}

void lab_layernorm_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* mean,
                            const float* rstd, const float* w, std::size_t rows, std::size_t d) noexcept {
  const std::size_t d_vec = d - d % N;
  const float inv_d = 1.0f / static_cast<float>(d);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    const float* dyr = dy + r * d;
    float* dxr = dx + r * d;
    const batch mub(mean[r]), rb(rstd[r]);
    batch sg(0.0f), sgx(0.0f);
    std::size_t i = 0;
    for (; i < d_vec; i += N) {
      const batch xh = (batch::load_unaligned(xr + i) - mub) * rb;
      const batch g = batch::load_unaligned(dyr + i) * batch::load_unaligned(w + i);
      sg += g;
      sgx = xsimd::fma(g, xh, sgx);
      xsimd::fma(batch::load_unaligned(dyr + i), xh, batch::load_unaligned(dw + i)).store_unaligned(dw + i);
      (batch::load_unaligned(db + i) + batch::load_unaligned(dyr + i)).store_unaligned(db + i);
    }
    float mg = xsimd::reduce_add(sg), mgx = xsimd::reduce_add(sgx);
    for (; i < d; ++i) {
      const float xh = (xr[i] - mean[r]) * rstd[r];
      const float g = dyr[i] * w[i];
      mg += g;
      mgx += g * xh;
      dw[i] += dyr[i] * xh;
      db[i] += dyr[i];
    }
    mg *= inv_d;
    mgx *= inv_d;
    const batch mgb(mg), mgxb(mgx);
    for (i = 0; i < d_vec; i += N) {
      const batch xh = (batch::load_unaligned(xr + i) - mub) * rb;
      const batch g = batch::load_unaligned(dyr + i) * batch::load_unaligned(w + i);
      xsimd::fma(rb, g - mgb - xh * mgxb, batch::load_unaligned(dxr + i)).store_unaligned(dxr + i);
    }
    for (; i < d; ++i) {
      const float xh = (xr[i] - mean[r]) * rstd[r];
      dxr[i] += rstd[r] * (dyr[i] * w[i] - mg - xh * mgx);
    }
  }
}

void lab_gelu(float* y, const float* x, std::size_t n) noexcept {
  std::size_t i = 0;
  const batch c(kSqrt2OverPi), c3(kGeluCubic), half(0.5f), one(1.0f);
  for (; i + N <= n; i += N) {
    const batch v = batch::load_unaligned(x + i);
    const batch t = xsimd::tanh(c * xsimd::fma(c3 * v, v * v, v));
    (half * v * (one + t)).store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    const float t = ::tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    y[i] = 0.5f * v * (1.0f + t);
  }
}

void lab_gelu_backward(float* dx, const float* dy, const float* x, std::size_t n) noexcept {
  std::size_t i = 0;
  const batch c(kSqrt2OverPi), c3(kGeluCubic), c33(3.0f * kGeluCubic), half(0.5f), one(1.0f);
  for (; i + N <= n; i += N) {
    const batch v = batch::load_unaligned(x + i);
    const batch v2 = v * v;
    const batch t = xsimd::tanh(c * xsimd::fma(c3 * v, v2, v));
    const batch du = c * xsimd::fma(c33, v2, one);
    const batch g = half * (one + t) + half * v * (one - t * t) * du;
    (batch::load_unaligned(dy + i) * g).store_unaligned(dx + i);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    const float t = ::tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
  }
}

void lab_rope(float* x, std::size_t rows, std::size_t row_stride, std::size_t n_heads, std::size_t head_dim,
              const float* cos, const float* sin, bool transpose) noexcept {
  const std::size_t half = head_dim / 2;
  const batch sign(transpose ? -1.0f : 1.0f);
  const float sg = transpose ? -1.0f : 1.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* c = cos + r * half;
    const float* s = sin + r * half;
    for (std::size_t h = 0; h < n_heads; ++h) {
      float* x1 = x + r * row_stride + h * head_dim;
      float* x2 = x1 + half;
      std::size_t k = 0;
      for (; k + N <= half; k += N) {
        const batch a = batch::load_unaligned(x1 + k), b = batch::load_unaligned(x2 + k);
        const batch cv = batch::load_unaligned(c + k), sv = batch::load_unaligned(s + k) * sign;
        (a * cv - b * sv).store_unaligned(x1 + k);
        (b * cv + a * sv).store_unaligned(x2 + k);
      }
      for (; k < half; ++k) {
        const float a = x1[k], b = x2[k], sv = s[k] * sg;
        x1[k] = a * c[k] - b * sv;
        x2[k] = b * c[k] + a * sv;
      }
    }
  }
}

}  // namespace posenc::kernels::POSENC_KERNEL_NS
