// KvCache::attend (posenc/kv_cache.hpp): attention of a few queries over the whole cache,
// flash-decoding style.
//
// For kv head h, the G = n_heads / n_kv_heads query heads that share it and the q_len queries make
// R rows (row r: query r / G of head h·G + r % G). The cache's slots are cut into at most
// kMaxChunks chunks, each a multiple of kTouch keys; one task is one (kv head, chunk): kTouch keys
// at a time it touches their keys and values (touch, below), then reads them once, kBlock keys at a
// time (widened from float16 into the worker's scratch when the cache is float16; a block of keys
// and one of values, 8 KiB each at head_dim 128, stay in L1), and for each tile of kRows rows
// computes the scores with every key read once for all the rows (scores_rows; the queries carry the
// scale), then softcap, ALiBi, T5 and the causal/window mask from the slots' positions, and one
// online-softmax step with the values loaded once for the rows (softmax_tile), keeping a partial
// (m, l, acc[head_dim]) per row. A last tile of fewer rows (G = 1 and one query: multi-head
// attention) goes one row at a time (dot_keys, softmax_block).
// Then, per row, the chunks' partials combine in chunk order (and the sink logit, if any):
//   M = max_c m_c,  L = Σ_c l_c e^(m_c − M) (+ e^(sink − M)),  y = Σ_c acc_c e^(m_c − M) / L.
// The chunks depend on the length only, so the result is the same on any thread count.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cmath>
#include <limits>
#include <new>

#include "attention_engine.hpp"
#include "kernels/kernels.hpp"
#include "posenc/kv_cache.hpp"
#include "position_bias.hpp"
#include "thread_pool.hpp"

namespace posenc {

namespace {

// Chunks per kv head: the tasks of one head, each with its partials for every row, so that the
// partials stay small (16 × rows × (head_dim + 2) floats per kv head) however long the cache.
constexpr std::size_t kMaxChunks = 16;
constexpr std::size_t kTouch = 512;  // keys touched at once (256 KiB of keys and values, float32, head_dim 128)
// Keys per online-softmax step: a block of keys and one of values (8 KiB each at head_dim 128)
// stay in L1 while every tile of rows goes over them.
constexpr std::size_t kBlock = 16;
constexpr std::size_t kRows = kernels::kAttentionRows;  // query rows per score tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// WebAssembly has no prefetch instruction: before computing kTouch keys, a task reads one word of
// each 64-byte line of their keys and values, loads with nothing to wait for, so they all go to
// memory at once and the keys are then computed from L2 (the result only feeds `touched`).
// Measured with the caches evicted before each call, 32 / 8 heads, one query: 4096 keys 6.0-7.5 ms
// and 32768 keys 53-61 ms, against 9.6-10.2 and 62-82 ms touching only the next 16-key block.
std::uint32_t touch(const void* p, std::size_t bytes) noexcept {
  const auto* w = static_cast<const std::uint32_t*>(p);
  std::uint32_t x = 0;
  for (std::size_t i = 0; i < bytes / 4; i += 16) x |= w[i];
  return x;
}
std::atomic<std::uint32_t> touched{0};

// One attend call's layout and inputs, shared by its tasks: R rows per kv head (G query heads ×
// q_len queries), n_chunks chunks of `chunk` slots per kv head, the partials and the workers'
// scratch in one buffer.
struct Attend {
  const KvAttendOptions& o;
  std::size_t Hk, d, cap, length, G, R, n_chunks, chunk, part, per_worker;
  const float* qr;     // the rotated, scaled queries [q_len][n_heads][d]
  float* parts;        // [Hk · n_chunks][part]: m[R], l[R], acc[R][d] per task
  float* work;         // [workers][per_worker]
  const double* qpos;  // [q_len]
  const double* pos;   // [cap] the cache's positions by slot
  const float *k32, *v32;
  const std::uint16_t *k16, *v16;
  bool half;
  float cap_s;        // softcap, 0: none
  double W;           // window, 0: none
  std::size_t sinks;  // sink tokens

  const float* query(std::size_t h, std::size_t r) const { return qr + ((r / G) * o.n_heads + h * G + r % G) * d; }
  // A key at kp (slot j) is hidden from the query at qp: in its future, or out of its window.
  bool hidden(double kp, double qp, std::size_t j) const {
    return (o.causal && kp > qp) || (W != 0 && j >= sinks && (kp <= qp - W || (!o.causal && kp >= qp + W)));
  }
};

// The scores of one tile of rows (rows t … t + rows - 1 of kv head h) against a block of n keys at
// slots j0 …: dot products, softcap, the bias terms and the mask.
void tile_scores(const Attend& a, std::size_t h, std::size_t t, std::size_t rows, std::size_t j0, std::size_t n,
                 const float* keys, double pmin, double pmax, float* s) {
  const float* q_rows[kRows];
  for (std::size_t u = 0; u < rows; ++u) q_rows[u] = a.query(h, t + u);
  if (rows == kRows) {
    kernels::scores_rows(s, kBlock, q_rows, keys, n, a.d);
  } else {
    for (std::size_t u = 0; u < rows; ++u) kernels::dot_keys(s + u * kBlock, q_rows[u], keys, a.d, n, a.d, 1.0f);
  }
  for (std::size_t u = 0; u < rows; ++u) {
    const double qp = a.qpos[(t + u) / a.G];
    float* sr = s + u * kBlock;
    if (a.cap_s > 0.0f)
      for (std::size_t j = 0; j < n; ++j) sr[j] = a.cap_s * std::tanh(sr[j] / a.cap_s);
    position_bias::add_at(a.o, a.o.n_heads, h * a.G + (t + u) % a.G, qp, a.pos + j0, n, sr);
    if ((a.o.causal && pmax > qp) || (a.W != 0 && (pmin <= qp - a.W || (!a.o.causal && pmax >= qp + a.W))))
      for (std::size_t j = 0; j < n; ++j)
        if (a.hidden(a.pos[j0 + j], qp, j0 + j)) sr[j] = kNegInf;
  }
}

// One task: kv head h, chunk c, on the worker's scratch — its partials for every row.
void attend_chunk(const Attend& a, std::size_t task, std::size_t worker) {
  const std::size_t h = task / a.n_chunks, c = task % a.n_chunks, d = a.d, R = a.R;
  const std::size_t j_begin = std::min(a.length, c * a.chunk), j_end = std::min(a.length, j_begin + a.chunk);
  float* kb = a.work + worker * a.per_worker;  // float16 keys and values widened, [kBlock][d] each
  float* vb = kb + kBlock * d;
  float* s = vb + kBlock * d;          // scores [kRows][kBlock]
  float* m = a.parts + task * a.part;  // this task's partials
  float* l = m + R;
  float* acc = l + R;
  std::fill(m, m + R, kNegInf);
  std::fill(l, l + R * (d + 1), 0.0f);
  std::uint32_t seen = 0;
  for (std::size_t j0 = j_begin; j0 < j_end; j0 += kBlock) {
    const std::size_t n = std::min(kBlock, j_end - j0);
    const std::size_t at = (h * a.cap + j0) * d;
    if ((j0 - j_begin) % kTouch == 0) {
      const std::size_t bytes = (std::min(j_end, j0 + kTouch) - j0) * d * (a.half ? 2 : 4);
      seen |= a.half ? touch(a.k16 + at, bytes) | touch(a.v16 + at, bytes)
                     : touch(a.k32 + at, bytes) | touch(a.v32 + at, bytes);
    }
    // Only the storage the cache has is addressed (the other pointer is null: no offset on it).
    const float* keys = kb;
    const float* vals = vb;
    if (a.half) {
      kernels::widen_half(kb, a.k16 + at, n * d);
      kernels::widen_half(vb, a.v16 + at, n * d);
    } else {
      keys = a.k32 + at;
      vals = a.v32 + at;
    }
    const auto [lo, hi] = std::minmax_element(a.pos + j0, a.pos + j0 + n);
    const double pmin = *lo, pmax = *hi;
    for (std::size_t t = 0; t < R; t += kRows) {
      const std::size_t rows = std::min(kRows, R - t);
      bool any = false;  // does any row of the tile see any key of the block?
      for (std::size_t u = 0; u < rows; ++u) {
        const double qp = a.qpos[(t + u) / a.G];
        any = any || !((a.o.causal && pmin > qp) || (a.W != 0 && j0 >= a.sinks && pmax <= qp - a.W));
      }
      if (!any) continue;
      tile_scores(a, h, t, rows, j0, n, keys, pmin, pmax, s);
      if (rows == kRows) {
        kernels::softmax_tile(s, kBlock, n, vals, d, d, m + t, l + t, acc + t * d);
      } else {
        for (std::size_t u = 0; u < rows; ++u)
          kernels::softmax_block(s + u * kBlock, n, vals, d, d, m + t + u, l + t + u, acc + (t + u) * d);
      }
    }
  }
  touched.fetch_or(seen, std::memory_order_relaxed);
}

// Per row, the chunks' partials in chunk order (and the sink logit, if any) into out.
void combine_chunks(const Attend& a, float* out) {
  const std::size_t d = a.d, R = a.R;
  for (std::size_t h = 0; h < a.Hk; ++h)
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t qh = h * a.G + r % a.G;
      float* y = out + ((r / a.G) * a.o.n_heads + qh) * d;
      const auto partial = [&](std::size_t c) { return a.parts + (h * a.n_chunks + c) * a.part; };
      float M = a.o.sinks ? a.o.sinks[qh] : kNegInf;
      for (std::size_t c = 0; c < a.n_chunks; ++c) M = std::max(M, partial(c)[r]);
      std::fill(y, y + d, 0.0f);
      if (M == kNegInf) continue;  // nothing visible: the output is 0, not NaN
      float L = a.o.sinks ? std::exp(a.o.sinks[qh] - M) : 0.0f;
      for (std::size_t c = 0; c < a.n_chunks; ++c) {
        const float* pm = partial(c);
        if (pm[r] == kNegInf) continue;
        const float w = std::exp(pm[r] - M);
        L += pm[R + r] * w;
        const float* ar = pm + 2 * R + r * d;
        for (std::size_t e = 0; e < d; ++e) y[e] += ar[e] * w;
      }
      const float inv = 1.0f / L;
      for (std::size_t e = 0; e < d; ++e) y[e] *= inv;
    }
}

}  // namespace

Status KvCache::attend_check(std::size_t q_len, const KvAttendOptions& o) const noexcept {
  if (q_len == 0) return bad("q_len must be > 0");
  if (o.n_heads == 0 || o.n_heads % o_.n_kv_heads != 0) return bad("n_heads must be a multiple of n_kv_heads");
  if (length_ == 0) return bad("the cache is empty: append keys and values first");
  if (o.scale && !std::isfinite(*o.scale)) return bad("scale must be finite");
  if (!std::isfinite(o.softcap)) return bad("softcap must be finite");
  if (o.sinks)
    for (std::size_t h = 0; h < o.n_heads; ++h)
      if (!std::isfinite(o.sinks[h])) return bad("sinks must be finite");
  if (Status s = position_bias::check(o, o.n_heads); !s.ok()) return s;
  if (!o.positions && q_len > length_) return bad("q_len > length needs the queries' positions");
  return Status::Ok();
}

Status KvCache::attend(const float* q, std::size_t q_len, const KvAttendOptions& o, float* out) noexcept {
  const std::size_t Hk = o_.n_kv_heads, d = o_.head_dim;
  if (Status s = attend_check(q_len, o); !s.ok()) return s;
  if (q == nullptr || out == nullptr) return bad("q and out must not be null");
  const std::size_t G = o.n_heads / Hk, R = G * q_len;
  // The chunks depend on the length only (never on the thread count): the same bits on any count.
  const std::size_t touches = (length_ + kTouch - 1) / kTouch, n_chunks = std::min(kMaxChunks, touches);
  const std::size_t chunk = (touches + n_chunks - 1) / n_chunks * kTouch, n_tasks = Hk * n_chunks;
  const std::size_t workers = std::max<std::size_t>(1, pool::pool_workers());
  const std::size_t part = R * (d + 2);  // one task's partials: m[R], l[R], acc[R][d]
  // Each worker's scratch rounded to 64 bytes, so that no cache line is written by two workers.
  const std::size_t per_worker = (2 * kBlock * d + kRows * kBlock + 15) / 16 * 16;
  std::vector<double> qpos;
  try {
    qpos.resize(q_len);
    scratch_.resize(q_len * o.n_heads * d + n_tasks * part + workers * per_worker);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "q_len too large for memory"};
  }
  for (std::size_t i = 0; i < q_len; ++i) {
    const double p = o.positions ? o.positions[i] : pos_[slot(length_ - q_len + i)];
    if (!(p >= 0 && p < 9007199254740992.0 && p == std::floor(p)))
      return bad("positions must be integers in [0, 2^53)");
    // The window of this query must not reach a token the ring has already dropped.
    if (o_.window != 0 && evicted_max_ >= 0 && evicted_max_ > p - static_cast<double>(o_.window))
      return bad("a query's window reaches an evicted token: capacity must be >= sink_tokens + window + q_len - 1");
    qpos[i] = p;
  }
  float* qr = scratch_.data();
  std::copy(q, q + q_len * o.n_heads * d, qr);
  if (Status s = rotate_at(qr, q_len, o.n_heads, qpos.data(), false); !s.ok()) return s;
  // The scale goes into the queries, once, instead of into every score.
  const float scale = static_cast<float>(o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(d)));
  for (std::size_t e = 0; e < q_len * o.n_heads * d; ++e) qr[e] *= scale;

  float* parts = qr + q_len * o.n_heads * d;
  const Attend a{o,
                 Hk,
                 d,
                 o_.capacity,
                 length_,
                 G,
                 R,
                 n_chunks,
                 chunk,
                 part,
                 per_worker,
                 qr,
                 parts,
                 parts + n_tasks * part,
                 qpos.data(),
                 pos_,
                 k32_,
                 v32_,
                 k16_,
                 v16_,
                 o_.dtype == DType::kFloat16,
                 o.softcap > 0.0 ? static_cast<float>(o.softcap) : 0.0f,
                 static_cast<double>(o_.window),
                 o_.sink_tokens};
  pool::parallel_for(n_tasks, workers, [&](std::size_t task, std::size_t worker) { attend_chunk(a, task, worker); });
  combine_chunks(a, out);
  return Status::Ok();
}

}  // namespace posenc
