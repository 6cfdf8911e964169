// KvCache::attend (posenc/kv_cache.hpp): attention of a few queries over the whole cache,
// flash-decoding style.
//
// For kv head h, the G = n_heads / n_kv_heads query heads that share it and the q_len queries
// make R rows (row r: query r / G of head h·G + r % G), taken kRows at a time. The cache's slots
// are cut into chunks of kChunk keys; one task is one (kv head, chunk): it reads that chunk's keys
// and values once, kBlock keys at a time (widened from float16 into the worker's scratch when the
// cache is float16), and for each tile of kRows rows computes the scores (dot_keys: scale · q·k
// per row, the block's keys hot in L1; then softcap, ALiBi and the causal/window mask from the
// slots' positions) and one online-softmax step with the values loaded once for the kRows rows
// (softmax_tile), keeping a partial (m, l, acc[head_dim]) per row.
// Then, per row, the chunks' partials combine in chunk order (and the sink logit, if any):
//   M = max_c m_c,  L = Σ_c l_c e^(m_c − M) (+ e^(sink − M)),  y = Σ_c acc_c e^(m_c − M) / L.
// The chunks depend on the length only, so the result is the same on any thread count.
// (Measured in WASM, 8 kv heads × 128: dot_keys on row-major keys beat Kᵀ panels with
// scores_tile for 1 and for 16 queries — the transpose costs more than the horizontal sums.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "attention_engine.hpp"
#include "kernels/kernels.hpp"
#include "posenc/kv_cache.hpp"
#include "thread_pool.hpp"

namespace posenc {

using engine::bad;

namespace {

constexpr std::size_t kChunk = 512;  // keys per task
constexpr std::size_t kBlock = kernels::kKeyBlock;     // keys per online-softmax step
constexpr std::size_t kRows = kernels::kAttentionRows;  // query rows per score tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

Status KvCache::attend(const float* q, std::size_t q_len, const KvAttendOptions& o, float* out) noexcept {
  const std::size_t Hk = o_.n_kv_heads, d = o_.head_dim, cap = o_.capacity;
  if (q_len == 0) return bad("q_len must be > 0");
  if (q == nullptr || out == nullptr) return bad("q and out must not be null");
  if (o.n_heads == 0 || o.n_heads % Hk != 0) return bad("n_heads must be a multiple of n_kv_heads");
  if (length_ == 0) return bad("the cache is empty: append keys and values first");
  if (o.scale && !std::isfinite(*o.scale)) return bad("scale must be finite");
  if (!std::isfinite(o.softcap)) return bad("softcap must be finite");
  for (std::size_t h = 0; h < o.n_heads; ++h) {
    if (o.sinks && !std::isfinite(o.sinks[h])) return bad("sinks must be finite");
    if (o.alibi_slopes && !std::isfinite(o.alibi_slopes[h])) return bad("alibi slopes must be finite");
  }
  if (!o.positions && q_len > length_) return bad("q_len > length needs the queries' positions");
  const std::size_t G = o.n_heads / Hk, R = G * q_len, R4 = (R + kRows - 1) / kRows * kRows;
  const std::size_t n_chunks = (length_ + kChunk - 1) / kChunk, n_tasks = Hk * n_chunks;
  const std::size_t workers = std::max<std::size_t>(1, pool::pool_workers());
  const std::size_t part = d + 2;  // per row: m, l, acc[d]
  // Each worker's scratch rounded to 64 bytes, so that no cache line is written by two workers.
  const std::size_t per_worker = (2 * kBlock * d + kRows * kBlock + 15) / 16 * 16;
  std::vector<double> qpos;
  try {
    qpos.resize(q_len);
    scratch_.resize(q_len * o.n_heads * d + n_tasks * R4 * part + workers * per_worker);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "q_len too large for memory"};
  }
  for (std::size_t i = 0; i < q_len; ++i) {
    const double p = o.positions ? o.positions[i] : pos_[slot(length_ - q_len + i)];
    if (!(p >= 0 && p < 9007199254740992.0 && p == std::floor(p))) return bad("positions must be integers in [0, 2^53)");
    // The window of this query must not reach a token the ring has already dropped.
    if (o_.window != 0 && evicted_max_ >= 0 && evicted_max_ > p - static_cast<double>(o_.window))
      return bad("a query's window reaches an evicted token: capacity must be >= sink_tokens + window + q_len - 1");
    qpos[i] = p;
  }
  float* qr = scratch_.data();
  float* parts = qr + q_len * o.n_heads * d;
  float* work = parts + n_tasks * R4 * part;
  std::copy(q, q + q_len * o.n_heads * d, qr);
  if (Status s = rotate_at(qr, q_len, o.n_heads, qpos.data(), false); !s.ok()) return s;

  const float scale = static_cast<float>(o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(d)));
  const float cap_s = o.softcap > 0.0 ? static_cast<float>(o.softcap) : 0.0f;
  const bool half = o_.dtype == DType::kFloat16;
  const double W = static_cast<double>(o_.window);
  const double* pos = pos_.get();
  const std::size_t sinks = o_.sink_tokens;

  pool::parallel_for(n_tasks, workers, [&](std::size_t task, std::size_t worker) {
    const std::size_t h = task / n_chunks, c = task % n_chunks;
    const std::size_t j_begin = c * kChunk, j_end = std::min(length_, j_begin + kChunk);
    float* kb = work + worker * per_worker;  // float16 keys and values widened, [kBlock][d] each
    float* vb = kb + kBlock * d;
    float* s = vb + kBlock * d;                 // scores [kRows][kBlock]
    float* m = parts + task * R4 * part;        // this task's partials: m[R4], l[R4], acc[R4][d]
    float* l = m + R4;
    float* acc = l + R4;
    std::fill(m, m + R4, kNegInf);
    std::fill(l, l + R4 * (d + 1), 0.0f);
    for (std::size_t j0 = j_begin; j0 < j_end; j0 += kBlock) {
      const std::size_t n = std::min(kBlock, j_end - j0);
      const std::size_t at = (h * cap + j0) * d;
      const float* vals = v32_.get() + at;
      const float* keys = k32_.get() + at;
      if (half) {
        kernels::widen_half(kb, k16_.get() + at, n * d);
        kernels::widen_half(vb, v16_.get() + at, n * d);
        keys = kb;
        vals = vb;
      }
      double pmin = pos[j0], pmax = pos[j0];
      for (std::size_t j = 1; j < n; ++j) {
        pmin = std::min(pmin, pos[j0 + j]);
        pmax = std::max(pmax, pos[j0 + j]);
      }
      const bool sink_block = j0 < sinks;
      for (std::size_t t = 0; t < R4; t += kRows) {
        const float* q_rows[kRows];
        bool any = false;
        for (std::size_t u = 0; u < kRows; ++u) {
          const std::size_t r = std::min(t + u, R - 1);  // spare rows repeat the last
          const std::size_t i = r / G, qh = h * G + r % G;
          q_rows[u] = qr + (i * o.n_heads + qh) * d;
          const double qp = qpos[i];
          any = any || !((o.causal && pmin > qp) || (W != 0 && !sink_block && pmax <= qp - W));
        }
        if (!any) continue;  // every row of the tile: all in the future, or all before the window
        for (std::size_t u = 0; u < kRows; ++u) kernels::dot_keys(s + u * kBlock, q_rows[u], keys, d, n, d, scale);
        for (std::size_t u = 0; u < kRows; ++u) {
          const std::size_t r = std::min(t + u, R - 1);
          const std::size_t i = r / G, qh = h * G + r % G;
          const double qp = qpos[i];
          float* sr = s + u * kBlock;
          if (cap_s > 0.0f)
            for (std::size_t j = 0; j < n; ++j) sr[j] = cap_s * std::tanh(sr[j] / cap_s);
          if (o.alibi_slopes) {
            const float slope = o.alibi_slopes[qh];
            for (std::size_t j = 0; j < n; ++j) sr[j] -= slope * static_cast<float>(std::fabs(qp - pos[j0 + j]));
          }
          if ((o.causal && pmax > qp) || (W != 0 && (pmin <= qp - W || (!o.causal && pmax >= qp + W)))) {
            for (std::size_t j = 0; j < n; ++j) {
              const double kp = pos[j0 + j];
              const bool sink = j0 + j < sinks;
              if ((o.causal && kp > qp) || (W != 0 && !sink && (kp <= qp - W || (!o.causal && kp >= qp + W))))
                sr[j] = kNegInf;
            }
          }
        }
        kernels::softmax_tile(s, kBlock, n, vals, d, d, m + t, l + t, acc + t * d);
      }
    }
  });

  for (std::size_t h = 0; h < Hk; ++h)
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t i = r / G, qh = h * G + r % G;
      float* y = out + (i * o.n_heads + qh) * d;
      const auto partial = [&](std::size_t c) { return parts + (h * n_chunks + c) * R4 * part; };
      float M = o.sinks ? o.sinks[qh] : kNegInf;
      for (std::size_t c = 0; c < n_chunks; ++c) M = std::max(M, partial(c)[r]);
      std::fill(y, y + d, 0.0f);
      if (M == kNegInf) continue;  // nothing visible: the output is 0, not NaN
      float L = o.sinks ? std::exp(o.sinks[qh] - M) : 0.0f;
      for (std::size_t c = 0; c < n_chunks; ++c) {
        const float* pm = partial(c);
        if (pm[r] == kNegInf) continue;
        const float w = std::exp(pm[r] - M);
        L += pm[R4 + r] * w;
        const float* ar = pm + 2 * R4 + r * d;
        for (std::size_t e = 0; e < d; ++e) y[e] += ar[e] * w;
      }
      const float inv = 1.0f / L;
      for (std::size_t e = 0; e < d; ++e) y[e] *= inv;
    }
  return Status::Ok();
}

}  // namespace posenc
