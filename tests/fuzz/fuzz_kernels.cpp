// Differential fuzz target: every kernel against its float64 reference (tests/native/reference.hpp)
// on random shapes and values. A difference beyond the tolerance the test suite asserts traps.
#include <cmath>
#include <cstdint>
#include <vector>

#include "input.hpp"
#include "posenc/posenc.hpp"
#include "reference.hpp"

namespace {

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in{data, size};
  switch (in.range(0, 2)) {
    case 0: {  // sinusoidal
      const std::size_t seq_len = in.range(1, 40), d_model = in.range(1, 40);
      const double base = 2.0 + in.byte() * 500.0;
      std::vector<float> out(seq_len * d_model);
      if (!posenc::sinusoidal(out.data(), seq_len, d_model, {base}).ok()) __builtin_trap();
      expect_close(out, posenc::reference::sinusoidal(seq_len, d_model, base), 4e-7);
      break;
    }
    case 1: {  // RoPE, accurate angles, both layouts
      const std::size_t head_dim = 2 * in.range(1, 20), rot_dim = 2 * in.range(1, head_dim / 2);
      const std::size_t seq_len = in.range(1, 6), n_heads = in.range(1, 4);
      const bool interleaved = in.flag();
      posenc::RopeParams p;
      p.head_dim = head_dim;
      p.rot_dim = rot_dim;
      p.theta = 2.0 + in.byte() * 1000.0;
      std::vector<double> inv(rot_dim / 2), pos(seq_len), angle(seq_len * rot_dim / 2);
      double af;
      if (!posenc::rope_frequencies(p, 0, inv.data(), inv.size(), &af).ok()) __builtin_trap();
      for (auto& x : pos) x = static_cast<double>(in.range(0, 255)) * (1 + in.byte());
      for (std::size_t t = 0; t < seq_len; ++t)
        for (std::size_t k = 0; k < rot_dim / 2; ++k) angle[t * rot_dim / 2 + k] = pos[t] * inv[k];
      std::vector<float> x(seq_len * n_heads * head_dim);
      for (auto& v : x) v = in.finite(1.0f);
      const auto want = posenc::reference::rope(x, seq_len, n_heads, head_dim, rot_dim, angle, interleaved);
      const posenc::RopeApplyOptions o{interleaved ? posenc::RopeLayout::kInterleaved : posenc::RopeLayout::kHalfSplit,
                                       posenc::Precision::kAccurate, 1.0};
      if (!posenc::apply_rope(x.data(), seq_len, n_heads, head_dim, inv.data(), rot_dim, pos.data(), 0, o).ok())
        __builtin_trap();
      expect_close(x, want, 2e-6);
      break;
    }
    default: {  // attention, streaming and weights paths
      const std::size_t n_kv = in.range(1, 3), group = in.range(1, 3), d = in.range(1, 17);
      const std::size_t kv_len = in.range(1, 140), q_len = in.range(1, 9);
      posenc::AttentionOptions o;
      o.n_heads = n_kv * group;
      o.n_kv_heads = n_kv;
      o.head_dim = d;
      o.causal = in.flag();
      if (in.flag()) o.softcap = 0.5 + in.byte() / 16.0;
      std::vector<float> slopes(o.n_heads);
      if (in.flag()) {
        posenc::alibi_slopes(slopes.data(), o.n_heads);
        o.alibi_slopes = slopes.data();
      }
      std::vector<float> q(q_len * o.n_heads * d), k(kv_len * n_kv * d), v(kv_len * n_kv * d);
      for (auto& e : q) e = in.finite(2.0f);
      for (auto& e : k) e = in.finite(2.0f);
      for (auto& e : v) e = in.finite(1.0f);
      std::vector<float> out(q.size()), w(o.n_heads * q_len * kv_len);
      const bool weights = in.flag();
      if (!posenc::attention(q.data(), k.data(), v.data(), q_len, kv_len, o, out.data(), weights ? w.data() : nullptr)
               .ok())
        __builtin_trap();
      expect_close(out, posenc::reference::attention(q, k, v, q_len, kv_len, o), 1e-5);
      break;
    }
  }
  return 0;
}
