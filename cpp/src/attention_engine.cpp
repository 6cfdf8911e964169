// The attention engine (attention_engine.hpp): tiles of query rows against key blocks with an
// online softmax, every bias term, mask, window and sink applied per row; the per-row work (dot
// products, softmax steps, Kᵀ panels) is in kernels/attention.cpp.
#include "attention_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "kernels/kernels.hpp"
#include "position_bias.hpp"
#include "thread_pool.hpp"

namespace posenc::engine {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::size_t kKeyBlock = kernels::kKeyBlock;  // keys per online-softmax step

bool has_bias_terms(const Problem& p) { return p.mask_f || p.mask_b || position_bias::any(p) || p.bias; }

// Adds the bias of row (b, h, i) for keys [j0, j0 + n) to s; keys past kmax are never passed.
void add_bias(const Problem& p, std::size_t b, std::size_t h, std::size_t i, std::size_t j0, std::size_t n, float* s) {
  if (p.mask_f) {
    const float* m = p.mask_f + b * p.m_sb + h * p.m_sh + i * p.m_ss + j0;
    for (std::size_t j = 0; j < n; ++j) s[j] += m[j];
  } else if (p.mask_b) {
    const std::uint8_t* m = p.mask_b + b * p.m_sb + h * p.m_sh + i * p.m_ss + j0;
    for (std::size_t j = 0; j < n; ++j)
      if (!m[j]) s[j] = kNegInf;
  }
  position_bias::add_run(p, p.q_heads, h, p.qpos0 + static_cast<std::int64_t>(i), static_cast<std::int64_t>(j0), n, s);
  if (p.bias) {
    const float* bb = p.bias + h * p.bias_sh + i * p.kv_len + j0;
    for (std::size_t j = 0; j < n; ++j) s[j] += bb[j];
  }
}

void apply_softcap(float* s, std::size_t n, float cap) {
  if (cap > 0.0f)
    for (std::size_t j = 0; j < n; ++j) s[j] = cap * std::tanh(s[j] / cap);
}

// The keys row (b, i) can see at all: [0, kmax). Causal, nonpad and a short mask's padding are
// all "-inf from here on", so those keys are skipped rather than computed and thrown away.
std::size_t visible_keys(const Problem& p, std::size_t b, std::size_t i) {
  std::int64_t kmax = static_cast<std::int64_t>(p.kv_len);
  if (p.causal) kmax = std::min(kmax, static_cast<std::int64_t>(i) + p.causal_offset[b] + 1);
  if (p.nonpad) kmax = std::min(kmax, p.nonpad[b]);
  if (p.mask_f || p.mask_b) kmax = std::min(kmax, static_cast<std::int64_t>(p.mask_len));
  const std::int64_t qpos = p.qpos0 + static_cast<std::int64_t>(i);
  if (p.window != 0 && !p.causal)  // bidirectional window: j < qpos + window
    kmax = std::min(kmax, qpos + static_cast<std::int64_t>(p.window));
  if (p.chunk != 0) {  // the end of the query's chunk
    const auto c = static_cast<std::int64_t>(p.chunk);
    kmax = std::min(kmax, qpos < 0 ? 0 : (qpos / c + 1) * c);
  }
  return static_cast<std::size_t>(std::max<std::int64_t>(kmax, 0));
}

// The first key after row i's gap: keys [sink_tokens, window_start) are hidden — before the
// window, or before the query's chunk (none without either). Keys before it are skipped a block
// at a time, as the causal path skips the future.
std::size_t window_start(const Problem& p, std::size_t i) {
  const std::int64_t qpos = p.qpos0 + static_cast<std::int64_t>(i);
  std::int64_t lo = 0;
  if (p.window != 0) lo = qpos - static_cast<std::int64_t>(p.window) + 1;
  if (p.chunk != 0 && qpos >= 0)
    lo = std::max(lo, qpos / static_cast<std::int64_t>(p.chunk) * static_cast<std::int64_t>(p.chunk));
  return static_cast<std::size_t>(std::max<std::int64_t>(lo, 0));
}

// Hides the window gap [sink_tokens, start) of a score row that begins at key j0.
void mask_window(const Problem& p, std::size_t start, std::size_t j0, std::size_t n, float* s) {
  const std::size_t lo = std::max(p.sink_tokens, j0), hi = std::min(start, j0 + n);
  for (std::size_t j = lo; j < hi; ++j) s[j - j0] = kNegInf;
}

// One row with every score kept (scratch s[kv_len]): for qk_matmul_output.
void run_row_full(const Problem& p, std::size_t b, std::size_t h, std::size_t i, const float* qrow, const float* keys,
                  std::size_t k_stride, const float* vals, std::size_t v_stride, float* yrow, float* s) {
  const std::size_t T = p.kv_len, kmax = visible_keys(p, b, i);
  float* qk = p.qk + ((b * p.q_heads + h) * p.q_len + i) * T;
  kernels::dot_keys(s, qrow, keys, k_stride, T, p.head_dim, p.scale);
  if (p.qk_mode == 0) std::copy(s, s + T, qk);
  apply_softcap(s, T, p.softcap);
  if (p.qk_mode == 1) std::copy(s, s + T, qk);
  add_bias(p, b, h, i, 0, kmax, s);
  std::fill(s + kmax, s + T, kNegInf);
  mask_window(p, window_start(p, i), 0, kmax, s);
  if (p.qk_mode == 2) std::copy(s, s + T, qk);
  // A sink logit starts the softmax: it adds exp(sink - m) to the denominator and nothing to y.
  float m = p.sinks ? p.sinks[h] : kNegInf, l = p.sinks ? 1.0f : 0.0f;
  std::fill(yrow, yrow + p.v_dim, 0.0f);
  kernels::softmax_block(s, kmax, vals, v_stride, p.v_dim, &m, &l, yrow);
  if (m == kNegInf) {  // fully masked row: probabilities and output are 0, not NaN
    std::fill(s, s + T, 0.0f);
  } else {
    const float inv = 1.0f / l;
    for (std::size_t j = 0; j < kmax; ++j) s[j] *= inv;
    std::fill(s + kmax, s + T, 0.0f);
    for (std::size_t d = 0; d < p.v_dim; ++d) yrow[d] *= inv;
  }
  if (p.qk_mode == 3) std::copy(s, s + T, qk);
}

// dst[n][d] = the float16 rows src[j * stride …] widened (exactly, as half::to_float) to float32;
// rows that are contiguous in src go to the kernel in one call.
void widen_rows(float* dst, const std::uint16_t* src, std::size_t stride, std::size_t n, std::size_t d) {
  if (stride == d) {
    kernels::widen_half(dst, src, n * d);
    return;
  }
  for (std::size_t j = 0; j < n; ++j) kernels::widen_half(dst + j * d, src + j * stride, d);
}

// a * b, or SIZE_MAX (an allocation that fails with length_error) if that overflows.
std::size_t times(std::size_t a, std::size_t b) {
  return b != 0 && a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
}

// Flash-attention style tiling (streaming, no score row kept), split over the thread pool
// (thread_pool.hpp): a task per (batch, query head, block of kQueryBlock query rows). A worker
// keeps its own copy of the kv head its tasks read — K packed into Kᵀ panels and V into
// contiguous rows, float16 K / V widened on the way — filled (lazily, up to the keys the task
// sees) when a task needs a kv head it does not hold. Each key block (kKeyBlock keys: a 16 KiB
// panel at d = 64) is then used by every kAttentionRows tile of the query block while it is in
// cache; the per-row online-softmax state (m, l, acc[v_dim]) and the score tile are the worker's
// scratch too. Tasks go out head by head (a worker re-packs about once per head) and, within a
// head, last query block first: under a causal mask those see the most keys, so the long tasks
// start early and the short ones fill the tail.
// Memory: O(kv_len · (head_dim + v_dim)) floats per worker, all allocated on the caller before
// the tasks start; packing a kv head costs O(kv_len · head_dim), next to O(64 · kv_len ·
// head_dim) for each query block that reads it. (Packing every kv head once, up front, would
// need about a copy of K and V per call, and its pages' first touch cost more than the packing.)
// When every score is wanted (qk_matmul_output, weights) rows run one by one with a score row
// s[kv_len] per worker, the same tasks; only float16 K / V are copied (widened). Each output row
// is computed by one task with the same operations whatever the thread count, so results are
// bitwise the same on 1 or n threads.
constexpr std::size_t kQueryBlock = 64;
// Below this many multiply-adds a call runs on the caller alone: waking workers would cost more.
constexpr double kMinParallelWork = 1 << 20;

// One worker's copy of the kv head (b, kv head) = `group` that its tasks read: Kᵀ panels
// kt[head_dim · padded], V rows vp[kv_len][v_dim], and (untiled only) the widened float16 K rows
// kh[kv_len][head_dim].
// Filled lazily, keys [0, packed), up to what a task sees.
struct KvCopy {
  float* kt = nullptr;
  float* vp = nullptr;
  float* kh = nullptr;
  std::size_t group = std::numeric_limits<std::size_t>::max(), packed = 0;
};

// Makes kv hold keys [0, need) of kv head g: tiled, whole key blocks packed (transposed K, V
// rows; float16 K widened straight into the panels, one pass); otherwise float16 K / V widened,
// all of them.
void pack(const Problem& p, std::size_t g, std::size_t need, bool tiled, KvCopy* kv) {
  if (kv->group != g) {
    kv->group = g;
    kv->packed = 0;
  }
  if (need <= kv->packed) return;
  const std::size_t from = kv->packed;  // a multiple of kKeyBlock
  const std::size_t to = tiled ? std::min(p.kv_len, (need + kKeyBlock - 1) / kKeyBlock * kKeyBlock) : p.kv_len;
  const std::size_t b = g / p.kv_heads, kvh = g % p.kv_heads, n = to - from;
  const std::size_t k_at = b * p.ks.b + kvh * p.ks.h + from * p.ks.s;
  if (p.v16 != nullptr) {
    widen_rows(kv->vp + from * p.v_dim, p.v16 + b * p.vs.b + kvh * p.vs.h + from * p.vs.s, p.vs.s, n, p.v_dim);
  } else if (tiled) {
    const float* vals = p.v + b * p.vs.b + kvh * p.vs.h;
    for (std::size_t j = from; j < to; ++j)
      std::copy(vals + j * p.vs.s, vals + j * p.vs.s + p.v_dim, kv->vp + j * p.v_dim);
  }
  if (tiled) {
    const std::size_t panel = p.head_dim * kKeyBlock;
    if (to % kKeyBlock != 0) std::fill_n(kv->kt + to / kKeyBlock * panel, panel, 0.0f);  // the last panel's padding
    float* panels = kv->kt + from / kKeyBlock * panel;
    if (p.k16 != nullptr) kernels::widen_transpose_keys(panels, p.k16 + k_at, p.ks.s, n, p.head_dim);
    else kernels::transpose_keys(panels, p.k + k_at, p.ks.s, n, p.head_dim);
  } else if (p.k16 != nullptr) {
    widen_rows(kv->kh + from * p.head_dim, p.k16 + k_at, p.ks.s, n, p.head_dim);
  }
  kv->packed = to;
}

// One worker's scratch for a query block.
struct BlockScratch {
  float* s;           // [kAttentionRows][kKeyBlock] scores
  float* acc;         // [kQueryBlock][v_dim]
  float* m;           // [kQueryBlock] running max
  float* l;           // [kQueryBlock] running sum
  std::size_t* kmax;  // [kQueryBlock] visible keys per row
  std::size_t* kmin;  // [kQueryBlock] window start per row
};

// Rows [qb, qb + kQueryBlock) ∩ [0, q_len) of head (b, h), reading kv head g through the worker's copy kv.
void run_block(const Problem& p, std::size_t b, std::size_t h, std::size_t qb, std::size_t g, KvCopy* kv,
               const BlockScratch& w) {
  constexpr std::size_t R = kernels::kAttentionRows;
  const float* q_head = p.q + b * p.qs.b + h * p.qs.h;
  float* y_head = p.y + b * p.ys.b + h * p.ys.h;
  const bool biased = has_bias_terms(p);
  const std::size_t rows = std::min(kQueryBlock, p.q_len - qb);
  std::size_t kmax_block = 0, kmin_block = p.kv_len;
  for (std::size_t r = 0; r < kQueryBlock; ++r) {
    w.kmax[r] = r < rows ? visible_keys(p, b, qb + r) : 0;
    w.kmin[r] = r < rows ? window_start(p, qb + r) : p.kv_len;
    kmax_block = std::max(kmax_block, w.kmax[r]);
    kmin_block = std::min(kmin_block, w.kmin[r]);
  }
  pack(p, g, kmax_block, true, kv);
  const float* kt = kv->kt;
  const float* vp = kv->vp;
  std::fill(w.m, w.m + kQueryBlock, p.sinks ? p.sinks[h] : kNegInf);
  std::fill(w.l, w.l + kQueryBlock, p.sinks ? 1.0f : 0.0f);
  std::fill(w.acc, w.acc + kQueryBlock * p.v_dim, 0.0f);
  for (std::size_t j0 = 0; j0 < kmax_block; j0 += kKeyBlock) {
    const std::size_t n = std::min(kKeyBlock, kmax_block - j0);
    // Sliding window: blocks wholly in every row's gap (past the sink tokens) are skipped.
    if (j0 >= p.sink_tokens && j0 + n <= kmin_block) continue;
    for (std::size_t t = 0; t < rows; t += R) {
      const std::size_t tile_rows = std::min(R, rows - t);
      std::size_t kmax_tile = 0, kmin_tile = p.kv_len;
      const float* q_rows[R];
      for (std::size_t r = 0; r < R; ++r) {
        q_rows[r] = q_head + (qb + t + std::min(r, tile_rows - 1)) * p.qs.s;  // spare rows repeat the last
        kmax_tile = std::max(kmax_tile, w.kmax[t + r]);
        kmin_tile = std::min(kmin_tile, w.kmin[t + r]);
      }
      if (kmax_tile <= j0) continue;                             // causal: this tile sees none of these keys
      if (j0 >= p.sink_tokens && j0 + n <= kmin_tile) continue;  // nor these (window)
      kernels::scores_tile(w.s, kKeyBlock, q_rows, kt + j0 * p.head_dim, n, p.head_dim, p.scale);
      for (std::size_t r = 0; r < R; ++r) {
        float* sr = w.s + r * kKeyBlock;
        const std::size_t visible = w.kmax[t + r] > j0 ? std::min(n, w.kmax[t + r] - j0) : 0;
        apply_softcap(sr, visible, p.softcap);
        if (biased && visible > 0) add_bias(p, b, h, qb + t + r, j0, visible, sr);
        std::fill(sr + visible, sr + n, kNegInf);
        if (p.window != 0 || p.chunk != 0) mask_window(p, w.kmin[t + r], j0, n, sr);
      }
      kernels::softmax_tile(w.s, kKeyBlock, n, vp + j0 * p.v_dim, p.v_dim, p.v_dim, w.m + t, w.l + t,
                            w.acc + t * p.v_dim);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    float* yrow = y_head + (qb + r) * p.ys.s;
    const float* ar = w.acc + r * p.v_dim;
    if (w.m[r] == kNegInf || w.l[r] == 0.0f) {  // fully masked row: 0, not NaN
      std::fill(yrow, yrow + p.v_dim, 0.0f);
    } else {
      const float inv = 1.0f / w.l[r];
      for (std::size_t d = 0; d < p.v_dim; ++d) yrow[d] = ar[d] * inv;
    }
  }
}

}  // namespace

Status run(const Problem& p) {
  constexpr std::size_t R = kernels::kAttentionRows;
  static_assert(kQueryBlock % R == 0, "query blocks hold whole tiles");
  const bool tiled = p.qk == nullptr;
  const std::size_t padded = (p.kv_len + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  const std::size_t group = p.q_heads / p.kv_heads;  // GQA: query head h reads kv head h / group
  const std::size_t q_blocks = (p.q_len + kQueryBlock - 1) / kQueryBlock;
  const double work = static_cast<double>(p.batch * p.q_heads) * static_cast<double>(p.q_len) *
                      static_cast<double>(p.kv_len) * static_cast<double>(p.head_dim + p.v_dim);
  const std::size_t n_workers = work < kMinParallelWork ? 1 : pool::pool_workers();
  const std::size_t kt_size = tiled ? p.head_dim * padded : 0, vp_size = tiled || p.v16 ? p.kv_len * p.v_dim : 0,
                    kh_size = p.k16 && !tiled ? p.kv_len * p.head_dim : 0;
  // Each worker's share rounded to 64 bytes, so that no cache line is written by two workers.
  const std::size_t per_worker =
      (kt_size + vp_size + kh_size + (tiled ? R * kKeyBlock + kQueryBlock * (p.v_dim + 2) : p.kv_len) + 15) / 16 * 16;
  std::vector<float> scratch;
  std::vector<std::size_t> bounds;
  std::vector<KvCopy> kv;
  try {
    scratch.resize(times(n_workers, per_worker));
    if (tiled) bounds.resize(n_workers * 2 * kQueryBlock);
    kv.resize(n_workers);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "kv length too large for memory"};
  } catch (const std::length_error&) {
    return {StatusCode::kTooLarge, "kv length too large for memory"};
  }
  for (std::size_t w = 0; w < n_workers; ++w) {
    float* base = scratch.data() + w * per_worker;
    kv[w].kt = base;
    kv[w].vp = base + kt_size;
    kv[w].kh = base + kt_size + vp_size;
  }

  // Task t: query block q_blocks - 1 - t % q_blocks of query head t / q_blocks (over batch × heads).
  pool::parallel_for(p.batch * p.q_heads * q_blocks, n_workers, [&](std::size_t t, std::size_t worker) {
    const std::size_t b = t / q_blocks / p.q_heads, h = t / q_blocks % p.q_heads;
    const std::size_t qb = (q_blocks - 1 - t % q_blocks) * kQueryBlock, g = b * p.kv_heads + h / group;
    float* ws = scratch.data() + worker * per_worker + kt_size + vp_size + kh_size;
    KvCopy* copy = &kv[worker];
    if (tiled) {
      std::size_t* wb = bounds.data() + worker * 2 * kQueryBlock;
      const BlockScratch w{ws,
                           ws + R * kKeyBlock,
                           ws + R * kKeyBlock + kQueryBlock * p.v_dim,
                           ws + R * kKeyBlock + kQueryBlock * (p.v_dim + 1),
                           wb,
                           wb + kQueryBlock};
      run_block(p, b, h, qb, g, copy, w);
      return;
    }
    if (p.k16 != nullptr || p.v16 != nullptr) pack(p, g, p.kv_len, false, copy);
    const float* keys = p.k16 ? copy->kh : p.k + b * p.ks.b + (h / group) * p.ks.h;
    const float* vals = p.v16 ? copy->vp : p.v + b * p.vs.b + (h / group) * p.vs.h;
    const std::size_t k_stride = p.k16 ? p.head_dim : p.ks.s, v_stride = p.v16 ? p.v_dim : p.vs.s;
    const float* q_head = p.q + b * p.qs.b + h * p.qs.h;
    float* y_head = p.y + b * p.ys.b + h * p.ys.h;
    for (std::size_t i = qb; i < std::min(qb + kQueryBlock, p.q_len); ++i)
      run_row_full(p, b, h, i, q_head + i * p.qs.s, keys, k_stride, vals, v_stride, y_head + i * p.ys.s, ws);
  });
  return Status::Ok();
}

// The product of dims as a count of elements that fits in memory addresses (with room to spare),
// or -1 on overflow.
std::int64_t checked_product(std::initializer_list<std::int64_t> dims) {
  const std::uint64_t limit = std::numeric_limits<std::size_t>::max() / sizeof(float) / 2;
  std::uint64_t n = 1;
  for (const std::int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > limit / static_cast<std::uint64_t>(d)) return -1;
    n *= static_cast<std::uint64_t>(d);
  }
  return static_cast<std::int64_t>(n);
}

}  // namespace posenc::engine
