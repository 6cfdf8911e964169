// ONNX Attention-23/24 and RotaryEmbedding-23 semantics, and attention with fused positional
// terms. Shapes are checked here; the per-row work (dot products, online softmax) is in
// kernels/attention.cpp. The semantics, case by case, are those of onnx/reference/ops/op_attention.py
// and op_rotary_embedding.py as summarized in shared/conformance/README.md.
#include "posenc/attention.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include "kernels/kernels.hpp"
#include "thread_pool.hpp"

namespace posenc {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::size_t kKeyBlock = kernels::kKeyBlock;  // keys per online-softmax step

Status bad(const char* message) { return {StatusCode::kBadArgument, message}; }
Status shape(const char* message) { return {StatusCode::kBadShape, message}; }

// Element strides of a [batch][heads][seq][dim] tensor stored token-major ([B][S][H][d], ONNX 3D
// and the fused API) or head-major ([B][H][S][d], ONNX 4D); dim is contiguous either way.
struct Strides {
  std::size_t b = 0, h = 0, s = 0;
};
Strides strides(bool token_major, std::size_t heads, std::size_t seq, std::size_t dim) {
  return token_major ? Strides{seq * heads * dim, dim, heads * dim} : Strides{heads * seq * dim, seq * dim, dim};
}

// Everything one attention computation needs, with element strides so that 3D (token-major)
// and 4D (head-major) tensors are read in place.
struct Problem {
  std::size_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 1, v_dim = 1;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const std::uint16_t* k16 = nullptr;       // float16 K and V instead (k, v unused), widened per kv head
  const std::uint16_t* v16 = nullptr;
  float* y = nullptr;
  Strides qs, ks, vs, ys;
  float scale = 1.0f;
  float softcap = 0.0f;
  // Bias terms. The mask is read at b*m_sb + h*m_sh + i*m_ss + j for j < mask_len.
  const float* mask_f = nullptr;
  const std::uint8_t* mask_b = nullptr;
  std::size_t m_sb = 0, m_sh = 0, m_ss = 0, mask_len = 0;
  bool causal = false;
  std::vector<std::int64_t> causal_offset;  // per batch: key j visible iff j <= i + offset
  const std::int64_t* nonpad = nullptr;     // per batch: keys j >= nonpad[b] are masked
  std::int64_t qpos0 = 0;                   // query i sits at position qpos0 + i (ALiBi, T5)
  const float* alibi = nullptr;             // [q_heads]
  const float* t5_table = nullptr;          // [num_buckets][q_heads]
  T5BucketParams t5;
  const float* bias = nullptr;              // + bias[h * bias_sh + i * kv_len + j]
  std::size_t bias_sh = 0;
  float* qk = nullptr;                      // [B][Hq][Sq][T] in mode qk_mode
  int qk_mode = 0;
  std::size_t window = 0;                   // sliding window: key j visible iff qpos - window < j (0: none)
  std::size_t sink_tokens = 0;              // with window: keys 0 … sink_tokens-1 stay visible
  std::size_t chunk = 0;                    // chunked attention: key j visible iff j / chunk == qpos / chunk
  const float* sinks = nullptr;             // [q_heads]: a learned logit in every softmax row, no value
};

bool has_bias_terms(const Problem& p) {
  return p.mask_f || p.mask_b || p.alibi || p.t5_table || p.bias;
}

// Adds the bias of row (b, h, i) for keys [j0, j0 + n) to s; keys past kmax are never passed.
void add_bias(const Problem& p, std::size_t b, std::size_t h, std::size_t i, std::size_t j0,
              std::size_t n, float* s) {
  if (p.mask_f) {
    const float* m = p.mask_f + b * p.m_sb + h * p.m_sh + i * p.m_ss + j0;
    for (std::size_t j = 0; j < n; ++j) s[j] += m[j];
  } else if (p.mask_b) {
    const std::uint8_t* m = p.mask_b + b * p.m_sb + h * p.m_sh + i * p.m_ss + j0;
    for (std::size_t j = 0; j < n; ++j)
      if (!m[j]) s[j] = kNegInf;
  }
  if (p.alibi) {
    // -slope·|qpos − key|, in float (distances are exact integers below 2^24): a loop the
    // compiler vectorizes.
    const float slope = p.alibi[h];
    const auto first = static_cast<float>(p.qpos0 + static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j0));
    for (std::size_t j = 0; j < n; ++j) s[j] -= slope * std::fabs(first - static_cast<float>(j));
  }
  if (p.t5_table) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto rel = static_cast<std::int64_t>(j0 + j) - (p.qpos0 + static_cast<std::int64_t>(i));
      s[j] += p.t5_table[static_cast<std::size_t>(t5_bucket(rel, p.t5)) * p.q_heads + h];
    }
  }
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
  if (p.chunk != 0 && qpos >= 0) lo = std::max(lo, qpos / static_cast<std::int64_t>(p.chunk) * static_cast<std::int64_t>(p.chunk));
  return static_cast<std::size_t>(std::max<std::int64_t>(lo, 0));
}

// Hides the window gap [sink_tokens, start) of a score row that begins at key j0.
void mask_window(const Problem& p, std::size_t start, std::size_t j0, std::size_t n, float* s) {
  const std::size_t lo = std::max(p.sink_tokens, j0), hi = std::min(start, j0 + n);
  for (std::size_t j = lo; j < hi; ++j) s[j - j0] = kNegInf;
}

// One row with every score kept (scratch s[kv_len]): for qk_matmul_output.
void run_row_full(const Problem& p, std::size_t b, std::size_t h, std::size_t i, const float* qrow,
                  const float* keys, std::size_t k_stride, const float* vals, std::size_t v_stride, float* yrow,
                  float* s) {
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
  float* s;     // [kAttentionRows][kKeyBlock] scores
  float* acc;   // [kQueryBlock][v_dim]
  float* m;     // [kQueryBlock] running max
  float* l;     // [kQueryBlock] running sum
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
      if (kmax_tile <= j0) continue;  // causal: this tile sees none of these keys
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
  const std::size_t per_worker = (kt_size + vp_size + kh_size +
                                  (tiled ? R * kKeyBlock + kQueryBlock * (p.v_dim + 2) : p.kv_len) + 15) / 16 * 16;
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
      const BlockScratch w{ws, ws + R * kKeyBlock, ws + R * kKeyBlock + kQueryBlock * p.v_dim,
                           ws + R * kKeyBlock + kQueryBlock * (p.v_dim + 1), wb, wb + kQueryBlock};
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


// ---- ONNX Attention: shapes -------------------------------------------------------------------

struct Dims {
  std::int64_t B, Hq, Hkv, Sq, Skv, P, T, D, Dv;
  std::int64_t q_row0, Sq_all;  // Q holds rows [q_row0, q_row0 + Sq) of Sq_all queries
  bool three_d;
};

Status attention_dims(const AttentionInputs& in, const AttentionAttrs& a, Dims* out) {
  if (!in.q.present() || !in.k.present() || !in.v.present()) return bad("Q, K and V are required");
  if (in.q.dtype != DType::kFloat32 && in.q.dtype != DType::kFloat16) return bad("Q, K and V must be float32 or float16");
  for (const TensorRef* t : {&in.k, &in.v})
    if (t->dtype != in.q.dtype) return bad("Q, K and V must have one element type");
  if (in.q.rank != in.k.rank || in.q.rank != in.v.rank || (in.q.rank != 3 && in.q.rank != 4))
    return shape("Q, K and V must all be 3D or all 4D");
  for (const TensorRef* t : {&in.q, &in.k, &in.v})
    for (int d = 0; d < t->rank; ++d)
      if (t->dims[d] < 1) return shape("Q, K and V dimensions must be >= 1");
  Dims d{};
  d.three_d = in.q.rank == 3;
  d.B = in.q.dims[0];
  if (in.k.dims[0] != d.B || in.v.dims[0] != d.B) return shape("Q, K and V must have the same batch size");
  if (d.three_d) {
    if (a.q_num_heads <= 0 || a.kv_num_heads <= 0)
      return bad("q_num_heads and kv_num_heads are required for 3D Q, K and V");
    d.Hq = a.q_num_heads;
    d.Hkv = a.kv_num_heads;
    if (in.q.dims[2] % d.Hq != 0) return shape("Q's last dimension must be a multiple of q_num_heads");
    if (in.k.dims[2] % d.Hkv != 0) return shape("K's last dimension must be a multiple of kv_num_heads");
    if (in.v.dims[2] % d.Hkv != 0) return shape("V's last dimension must be a multiple of kv_num_heads");
    d.Sq = in.q.dims[1];
    d.Skv = in.k.dims[1];
    if (in.v.dims[1] != d.Skv) return shape("K and V must have the same sequence length");
    d.D = in.q.dims[2] / d.Hq;
    if (in.k.dims[2] / d.Hkv != d.D) return shape("K's head size (last dimension / kv_num_heads) must equal Q's");
    d.Dv = in.v.dims[2] / d.Hkv;
  } else {
    d.Hq = in.q.dims[1];
    d.Hkv = in.k.dims[1];
    if (in.v.dims[1] != d.Hkv) return shape("K and V must have the same number of heads");
    d.Sq = in.q.dims[2];
    d.Skv = in.k.dims[2];
    if (in.v.dims[2] != d.Skv) return shape("K and V must have the same sequence length");
    d.D = in.q.dims[3];
    if (in.k.dims[3] != d.D) return shape("K's head size must equal Q's");
    d.Dv = in.v.dims[3];
  }
  if (d.Hq % d.Hkv != 0) return shape("q_num_heads must be a multiple of kv_num_heads");
  d.q_row0 = in.q_row0;
  d.Sq_all = in.q_len_total == 0 ? d.Sq : in.q_len_total;
  if (in.q_row0 < 0 || (in.q_len_total == 0 && in.q_row0 != 0) || d.Sq_all < d.Sq || d.q_row0 > d.Sq_all - d.Sq)
    return bad("Q's rows [q_row0, q_row0 + q_len) must lie in [0, q_len_total)");

  d.P = 0;
  if (in.past_key.present() != in.past_value.present())
    return bad("past_key and past_value must be given together");
  if (in.past_key.present()) {
    for (const TensorRef* t : {&in.past_key, &in.past_value}) {
      if (t->dtype != in.q.dtype) return bad("past_key and past_value must have Q's element type");
      if (t->rank != 4) return shape("past_key and past_value must be 4D [B, kv_num_heads, past_len, head_size]");
    }
    const auto& pk = in.past_key.dims;
    const auto& pv = in.past_value.dims;
    if (pk[0] != d.B || pk[1] != d.Hkv || pk[3] != d.D) return shape("past_key must be [B, kv_num_heads, past_len, head_size]");
    if (pv[0] != d.B || pv[1] != d.Hkv || pv[2] != pk[2] || pv[3] != d.Dv)
      return shape("past_value must be [B, kv_num_heads, past_len, v_head_size]");
    if (pk[2] < 0) return shape("past_key's past_len must be >= 0");
    d.P = pk[2];
  }
  d.T = d.P + d.Skv;

  if (in.nonpad_kv_seqlen.present()) {
    if (a.opset < 24) return bad("nonpad_kv_seqlen needs opset 24");
    const TensorRef& n = in.nonpad_kv_seqlen;
    if (n.dtype != DType::kInt64) return bad("nonpad_kv_seqlen must be int64");
    if (n.rank != 1 || n.dims[0] != d.B) return shape("nonpad_kv_seqlen must be [B]");
    const auto* v = static_cast<const std::int64_t*>(n.data);
    for (std::int64_t b = 0; b < d.B; ++b)
      if (v[b] < 0 || v[b] > d.T) return bad("nonpad_kv_seqlen values must be in [0, total kv length]");
  }

  if (in.attn_mask.present()) {
    const TensorRef& m = in.attn_mask;
    if (m.dtype != DType::kFloat32 && m.dtype != DType::kFloat16 && m.dtype != DType::kBool)
      return bad("attn_mask must be float32, float16 or bool");
    if (m.rank < 1 || m.rank > 4) return shape("attn_mask must have rank 1 to 4");
    const std::int64_t target[4] = {d.B, d.Hq, d.Sq_all, d.T};
    const std::int64_t last = m.dims[m.rank - 1];
    if (last < 1 || last > d.T) return shape("attn_mask's last dimension must be in [1, total kv length] (shorter is padded with -inf)");
    for (int r = 0; r < m.rank - 1; ++r) {
      const std::int64_t want = target[4 - m.rank + r];
      if (m.dims[r] != 1 && m.dims[r] != want)
        return shape("attn_mask does not broadcast to [B, q_num_heads, q_len, total kv length]");
    }
  }

  if (a.qk_matmul_output_mode < 0 || a.qk_matmul_output_mode > 3) return bad("qk_matmul_output_mode must be 0, 1, 2 or 3");
  if (a.softmax_precision != 0 && a.softmax_precision != 1)
    return bad("softmax_precision must be FLOAT (1): posenc computes in float32");
  if (a.scale && !std::isfinite(*a.scale)) return bad("scale must be finite");
  if (!std::isfinite(a.softcap)) return bad("softcap must be finite");
  if (a.is_causal != 0 && a.is_causal != 1) return bad("is_causal must be 0 or 1");

  for (const std::int64_t n : {checked_product({d.B, d.Hq, d.Sq, d.D}), checked_product({d.B, d.Hkv, d.T, d.D}),
                               checked_product({d.B, d.Hkv, d.T, d.Dv}),
                               checked_product({d.B, d.Hq, d.Sq, d.Dv})})
    if (n < 0) return {StatusCode::kTooLarge, "attention tensors too large for memory"};
  *out = d;
  return Status::Ok();
}

// Copies one [B][H][S][d] source (3D token-major or 4D head-major) into dst [B][H][dst_len][d]
// at sequence offset `at`.
void copy_heads(float* dst, std::size_t dst_len, std::size_t at, const float* src, bool three_d,
                std::size_t B, std::size_t H, std::size_t S, std::size_t d) {
  const Strides st = strides(three_d, H, S, d);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t s = 0; s < S; ++s)
        std::memcpy(dst + ((b * H + h) * dst_len + at + s) * d, src + b * st.b + h * st.h + s * st.s, d * sizeof(float));
}

}  // namespace

std::int64_t TensorRef::size() const noexcept {
  std::int64_t n = 1;
  for (int r = 0; r < rank; ++r) n *= dims[r];
  return n;
}

Status onnx_attention_shapes(const AttentionInputs& in, const AttentionAttrs& attrs,
                             AttentionShapes* shapes) noexcept {
  Dims d;
  if (Status s = attention_dims(in, attrs, &d); !s.ok()) return s;
  if (shapes == nullptr) return bad("shapes must not be null");
  AttentionShapes out;
  if (d.three_d) {
    out.y_rank = 3;
    out.y[0] = d.B; out.y[1] = d.Sq; out.y[2] = d.Hq * d.Dv;
  } else {
    out.y[0] = d.B; out.y[1] = d.Hq; out.y[2] = d.Sq; out.y[3] = d.Dv;
  }
  const std::int64_t pk[4] = {d.B, d.Hkv, d.T, d.D}, pv[4] = {d.B, d.Hkv, d.T, d.Dv}, qk[4] = {d.B, d.Hq, d.Sq, d.T};
  std::copy(pk, pk + 4, out.present_key);
  std::copy(pv, pv + 4, out.present_value);
  std::copy(qk, qk + 4, out.qk_matmul_output);
  *shapes = out;
  return Status::Ok();
}

Status onnx_attention(const AttentionInputs& in, const AttentionAttrs& a, float* y,
                      float* present_key, float* present_value, float* qk_matmul_output) noexcept {
  Dims d;
  if (Status s = attention_dims(in, a, &d); !s.ok()) return s;
  if (in.q.dtype != DType::kFloat32 || (in.attn_mask.present() && in.attn_mask.dtype == DType::kFloat16))
    return bad("onnx_attention computes float32 tensors (float16 ones go through onnx_attention_f16)");
  if (y == nullptr) return bad("Y must not be null");
  if (qk_matmul_output && checked_product({d.B, d.Hq, d.Sq, d.T}) < 0)
    return {StatusCode::kTooLarge, "qk_matmul_output too large for memory"};
  const auto B = static_cast<std::size_t>(d.B), Hq = static_cast<std::size_t>(d.Hq),
             Hkv = static_cast<std::size_t>(d.Hkv), Sq = static_cast<std::size_t>(d.Sq),
             Skv = static_cast<std::size_t>(d.Skv), P = static_cast<std::size_t>(d.P),
             T = static_cast<std::size_t>(d.T), D = static_cast<std::size_t>(d.D),
             Dv = static_cast<std::size_t>(d.Dv);

  Problem p;
  p.batch = B; p.q_heads = Hq; p.kv_heads = Hkv; p.q_len = Sq; p.kv_len = T; p.head_dim = D; p.v_dim = Dv;
  p.q = static_cast<const float*>(in.q.data);
  p.qs = strides(d.three_d, Hq, Sq, D);
  p.y = y;
  p.ys = strides(d.three_d, Hq, Sq, Dv);

  // Keys and values: read K and V in place unless a past must be prepended (then present_*,
  // the caller's output or our scratch, is built and read).
  std::vector<float> scratch_k, scratch_v;
  const bool build_present = in.past_key.present() || present_key || present_value;
  if (build_present) {
    float* pk = present_key;
    float* pv = present_value;
    try {
      if (!pk) { scratch_k.resize(B * Hkv * T * D); pk = scratch_k.data(); }
      if (!pv) { scratch_v.resize(B * Hkv * T * Dv); pv = scratch_v.data(); }
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "present_key / present_value too large for memory"};
    }
    if (P > 0) {
      copy_heads(pk, T, 0, static_cast<const float*>(in.past_key.data), false, B, Hkv, P, D);
      copy_heads(pv, T, 0, static_cast<const float*>(in.past_value.data), false, B, Hkv, P, Dv);
    }
    copy_heads(pk, T, P, static_cast<const float*>(in.k.data), d.three_d, B, Hkv, Skv, D);
    copy_heads(pv, T, P, static_cast<const float*>(in.v.data), d.three_d, B, Hkv, Skv, Dv);
    p.k = pk;
    p.v = pv;
    p.ks = strides(false, Hkv, T, D);
    p.vs = strides(false, Hkv, T, Dv);
  } else {
    p.k = static_cast<const float*>(in.k.data);
    p.v = static_cast<const float*>(in.v.data);
    p.ks = strides(d.three_d, Hkv, T, D);
    p.vs = strides(d.three_d, Hkv, T, Dv);
  }

  p.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(D)));
  p.softcap = a.softcap > 0.0 ? static_cast<float>(a.softcap) : 0.0f;

  if (in.attn_mask.present()) {
    const TensorRef& m = in.attn_mask;
    // Right-aligned numpy broadcasting to [B, Hq, Sq, mask_len]; broadcast dims get stride 0.
    std::int64_t dims[4] = {1, 1, 1, 1};
    for (int r = 0; r < m.rank; ++r) dims[4 - m.rank + r] = m.dims[r];
    const auto len = static_cast<std::size_t>(dims[3]);
    const std::size_t st_s = len, st_h = static_cast<std::size_t>(dims[2]) * st_s,
                      st_b = static_cast<std::size_t>(dims[1]) * st_h;
    p.m_ss = dims[2] == 1 ? 0 : st_s;
    p.m_sh = dims[1] == 1 ? 0 : st_h;
    p.m_sb = dims[0] == 1 ? 0 : st_b;
    p.mask_len = len;
    const auto row0 = static_cast<std::size_t>(d.q_row0) * p.m_ss;  // the piece's first query row
    if (m.dtype == DType::kBool) p.mask_b = static_cast<const std::uint8_t*>(m.data) + row0;
    else p.mask_f = static_cast<const float*>(m.data) + row0;
  }
  if (in.nonpad_kv_seqlen.present()) p.nonpad = static_cast<const std::int64_t*>(in.nonpad_kv_seqlen.data);
  p.causal = a.is_causal == 1;
  p.causal_offset.assign(B, d.q_row0);
  for (std::size_t b = 0; b < B; ++b) {
    if (in.past_key.present()) p.causal_offset[b] += d.P;
    else if (p.nonpad) p.causal_offset[b] += p.nonpad[b] - d.Sq_all;
  }
  p.qk = qk_matmul_output;
  p.qk_mode = a.qk_matmul_output_mode;
  return run(p);
}

// ---- ONNX RotaryEmbedding ------------------------------------------------------------------------

namespace {

struct RotaryDims {
  std::int64_t B = 0, H = 0, S = 0, D = 0, rd = 0, half = 0;
};

// Every check of RotaryEmbedding-23's inputs and attributes; the sizes they give.
Status rotary_dims(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& a, RotaryDims* out) {
  if (!x.present() || !cos_cache.present() || !sin_cache.present()) return bad("X, cos_cache and sin_cache are required");
  if (x.dtype != DType::kFloat32 || cos_cache.dtype != DType::kFloat32 || sin_cache.dtype != DType::kFloat32)
    return bad("X, cos_cache and sin_cache must be float32");
  if (x.rank != 3 && x.rank != 4) return shape("X must be 3D [B, S, num_heads*head_size] or 4D [B, num_heads, S, head_size]");
  for (int r = 0; r < x.rank; ++r)
    if (x.dims[r] < 1) return shape("X dimensions must be >= 1");
  if (a.interleaved != 0 && a.interleaved != 1) return bad("interleaved must be 0 or 1");
  std::int64_t B = x.dims[0], H, S, D;
  if (x.rank == 4) {
    H = x.dims[1]; S = x.dims[2]; D = x.dims[3];
  } else {
    if (a.num_heads <= 0) return bad("num_heads is required for 3D X");
    if (x.dims[2] % a.num_heads != 0) return shape("X's last dimension must be a multiple of num_heads");
    H = a.num_heads; S = x.dims[1]; D = x.dims[2] / a.num_heads;
  }
  const std::int64_t rd = a.rotary_embedding_dim == 0 ? D : a.rotary_embedding_dim;
  if (rd < 0 || rd > D || rd % 2 != 0) return bad("rotary_embedding_dim must be even and <= head_size (0: head_size)");
  const std::int64_t half = rd / 2;
  if (cos_cache.rank != sin_cache.rank) return shape("cos_cache and sin_cache must have the same shape");
  for (int r = 0; r < cos_cache.rank; ++r)
    if (cos_cache.dims[r] != sin_cache.dims[r]) return shape("cos_cache and sin_cache must have the same shape");
  std::int64_t max_pos = 0;
  if (position_ids.present()) {
    if (position_ids.dtype != DType::kInt64) return bad("position_ids must be int64");
    if (position_ids.rank != 2 || position_ids.dims[0] != B || position_ids.dims[1] != S)
      return shape("position_ids must be [B, S]");
    if (cos_cache.rank != 2) return shape("cos_cache must be 2D [max_position, rotary_embedding_dim/2] with position_ids");
    if (cos_cache.dims[1] != half) return shape("cos_cache's last dimension must be rotary_embedding_dim / 2");
    max_pos = cos_cache.dims[0];
    const auto* ids = static_cast<const std::int64_t*>(position_ids.data);
    for (std::int64_t t = 0; t < B * S; ++t)
      if (ids[t] < 0 || ids[t] >= max_pos) return bad("position_ids must be in [0, cos_cache rows)");
  } else {
    if (cos_cache.rank != 3 || cos_cache.dims[0] != B || cos_cache.dims[1] != S)
      return shape("cos_cache must be 3D [B, S, rotary_embedding_dim/2] without position_ids");
    if (cos_cache.dims[2] != half) return shape("cos_cache's last dimension must be rotary_embedding_dim / 2");
  }
  if (checked_product({x.dims[0], x.dims[1], x.dims[2], x.rank == 4 ? x.dims[3] : 1}) < 0)
    return {StatusCode::kTooLarge, "X too large for memory"};
  *out = {B, H, S, D, rd, half};
  return Status::Ok();
}

}  // namespace

Status onnx_rotary_embedding_check(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& a) noexcept {
  RotaryDims d;
  return rotary_dims(x, cos_cache, sin_cache, position_ids, a, &d);
}

Status onnx_rotary_embedding(const TensorRef& x, const TensorRef& cos_cache,
                             const TensorRef& sin_cache, const TensorRef& position_ids,
                             const RotaryEmbeddingAttrs& a, float* y) noexcept {
  RotaryDims d;
  if (Status s = rotary_dims(x, cos_cache, sin_cache, position_ids, a, &d); !s.ok()) return s;
  const std::int64_t B = d.B, H = d.H, S = d.S, D = d.D, rd = d.rd, half = d.half;
  if (y == nullptr) return bad("Y must not be null");

  const auto* src = static_cast<const float*>(x.data);
  if (y != src) std::memcpy(y, src, static_cast<std::size_t>(x.size()) * sizeof(float));
  if (half == 0) return Status::Ok();
  // Split over blocks of tokens (b, s); each worker expands the interleaved tables into its own cd, sd.
  const auto tokens = static_cast<std::size_t>(B * S), uh = static_cast<std::size_t>(half),
             ud = static_cast<std::size_t>(D), urd = static_cast<std::size_t>(rd);
  const std::size_t block = pool::rows_per_task(static_cast<std::size_t>(H) * ud * sizeof(float));
  const std::size_t n_tasks = (tokens + block - 1) / block, n_workers = n_tasks > 1 ? pool::pool_workers() : 1;
  std::vector<float> expanded;
  try {
    expanded.resize(n_workers * 2 * urd);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "rotary_embedding_dim too large for memory"};
  }
  const auto* cos = static_cast<const float*>(cos_cache.data);
  const auto* sin = static_cast<const float*>(sin_cache.data);
  const auto* ids = static_cast<const std::int64_t*>(position_ids.data);
  pool::parallel_for(n_tasks, n_workers, [&](std::size_t task, std::size_t worker) {
    float* cd = expanded.data() + worker * 2 * urd;
    float* sd = cd + urd;
    for (std::size_t bs = task * block; bs < std::min(tokens, (task + 1) * block); ++bs) {
      const auto b = static_cast<std::int64_t>(bs) / S, s = static_cast<std::int64_t>(bs) % S;
      const std::int64_t row = ids ? ids[b * S + s] : b * S + s;
      const float* c = cos + row * half;
      const float* sn = sin + row * half;
      if (a.interleaved) kernels::rope_expand_interleaved(c, sn, uh, cd, sd);
      for (std::int64_t h = 0; h < H; ++h) {
        float* xh = y + (x.rank == 4 ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D);
        if (a.interleaved)
          kernels::rope_rotate_interleaved(xh, 1, ud, urd, cd, sd);
        else
          kernels::rope_rotate_half_split(xh, 1, ud, uh, c, sn);
      }
    }
  });
  return Status::Ok();
}

// ---- attention with fused positional terms ------------------------------------------------------

Status attention(const float* q, const void* k_data, const void* v_data, std::size_t q_len,
                 std::size_t kv_len, const AttentionOptions& o, float* out, float* weights) noexcept {
  if (o.kv_dtype != DType::kFloat32 && o.kv_dtype != DType::kFloat16) return bad("kv_dtype must be float32 or float16");
  const bool half_kv = o.kv_dtype == DType::kFloat16;
  const auto* k = half_kv ? nullptr : static_cast<const float*>(k_data);
  const auto* v = half_kv ? nullptr : static_cast<const float*>(v_data);
  if (q_len == 0) return bad("q_len must be > 0");
  if (kv_len == 0) return bad("kv_len must be > 0");
  if (o.n_heads == 0) return bad("n_heads must be > 0");
  if (o.head_dim == 0) return bad("head_dim must be > 0");
  const std::size_t n_kv = o.n_kv_heads == 0 ? o.n_heads : o.n_kv_heads;
  if (o.n_heads % n_kv != 0) return bad("n_heads must be a multiple of n_kv_heads");
  if (q == nullptr || k_data == nullptr || v_data == nullptr || out == nullptr) return bad("q, k, v and out must not be null");
  if (o.scale && !std::isfinite(*o.scale)) return bad("scale must be finite");
  if (!std::isfinite(o.softcap)) return bad("softcap must be finite");
  if (o.t5_table) {
    if (Status s = t5_check(o.t5); !s.ok()) return s;
  }
  if (o.window && *o.window == 0) return bad("window must be > 0 (it counts the query's own key)");
  if (o.sink_tokens != 0 && !o.window) return bad("sink_tokens needs a window");
  if (o.chunk_size && *o.chunk_size == 0) return bad("chunk_size must be > 0");
  if (o.chunk_size && o.sink_tokens != 0) return bad("sink_tokens works with a window, not with chunk_size");
  if (o.temperature && !(std::isfinite(o.temperature->floor_scale) && o.temperature->floor_scale > 0 &&
                         std::isfinite(o.temperature->attn_scale)))
    return bad("temperature floor_scale must be finite and > 0, attn_scale finite");
  if (o.sinks)
    for (std::size_t h = 0; h < o.n_heads; ++h)
      if (!std::isfinite(o.sinks[h])) return bad("sinks must be finite");
  constexpr std::int64_t kMaxPos = std::int64_t{1} << 53;
  if (o.q_pos && (*o.q_pos < -kMaxPos || *o.q_pos > kMaxPos)) return bad("q_pos must be in [-2^53, 2^53]");
  const auto i64 = [](std::size_t n) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(n, std::numeric_limits<std::int64_t>::max()));
  };
  for (const std::int64_t n : {checked_product({i64(q_len), i64(o.n_heads), i64(o.head_dim)}),
                               checked_product({i64(kv_len), i64(n_kv), i64(o.head_dim)}),
                               weights ? checked_product({i64(o.n_heads), i64(q_len), i64(kv_len)}) : 0})
    if (n < 0) return {StatusCode::kTooLarge, "attention tensors too large for memory"};

  Problem p;
  p.batch = 1; p.q_heads = o.n_heads; p.kv_heads = n_kv; p.q_len = q_len; p.kv_len = kv_len;
  p.head_dim = o.head_dim; p.v_dim = o.head_dim;
  p.q = q;
  p.k = k;
  p.v = v;
  if (half_kv) {
    p.k16 = static_cast<const std::uint16_t*>(k_data);
    p.v16 = static_cast<const std::uint16_t*>(v_data);
  }
  p.y = out;
  p.qs = p.ys = strides(!o.heads_major, o.n_heads, q_len, o.head_dim);
  p.ks = p.vs = strides(!o.heads_major, n_kv, kv_len, o.head_dim);
  p.scale = static_cast<float>(o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(o.head_dim)));
  p.softcap = o.softcap > 0.0 ? static_cast<float>(o.softcap) : 0.0f;
  p.qpos0 = o.q_pos.value_or(static_cast<std::int64_t>(kv_len) - static_cast<std::int64_t>(q_len));
  p.causal = o.causal;
  p.causal_offset.assign(1, p.qpos0);
  p.alibi = o.alibi_slopes;
  p.t5_table = o.t5_table;
  p.t5 = o.t5;
  p.bias = o.bias;
  p.bias_sh = o.bias_per_head ? q_len * kv_len : 0;
  p.qk = weights;
  p.qk_mode = 3;
  p.window = o.window.value_or(0);
  p.chunk = o.chunk_size.value_or(0);
  p.sink_tokens = o.sink_tokens;
  p.sinks = o.sinks;

  // RoPE on copies of q and k: queries at qpos0 + i, keys at j.
  std::vector<float> q_rot, k_rot;
  if (o.rope_inv_freq) {
    try {
      q_rot.assign(q, q + q_len * o.n_heads * o.head_dim);
      if (half_kv) {  // the rotated keys are float32 (V stays float16)
        k_rot.resize(kv_len * n_kv * o.head_dim);
        kernels::widen_half(k_rot.data(), static_cast<const std::uint16_t*>(k_data), k_rot.size());
      } else {
        k_rot.assign(k, k + kv_len * n_kv * o.head_dim);
      }
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "q and k too large for memory"};
    }
    // Heads major: each head's [len][head_dim] slab is a one-head token-major tensor.
    auto rotate = [&](float* x, std::size_t len, std::size_t heads, double offset) {
      if (!o.heads_major) return apply_rope(x, len, heads, o.head_dim, o.rope_inv_freq, o.rope_rot_dim, nullptr, offset, o.rope);
      for (std::size_t h = 0; h < heads; ++h)
        if (Status s = apply_rope(x + h * len * o.head_dim, len, 1, o.head_dim, o.rope_inv_freq, o.rope_rot_dim,
                                  nullptr, offset, o.rope);
            !s.ok())
          return s;
      return Status::Ok();
    };
    if (Status s = rotate(q_rot.data(), q_len, o.n_heads, static_cast<double>(p.qpos0)); !s.ok()) return s;
    if (Status s = rotate(k_rot.data(), kv_len, n_kv, 0.0); !s.ok()) return s;
    p.q = q_rot.data();
    p.k = k_rot.data();
    p.k16 = nullptr;
  }
  if (o.temperature) {  // Llama 4 NoPE layers: each query row times its position's scale
    try {
      if (q_rot.empty()) q_rot.assign(q, q + q_len * o.n_heads * o.head_dim);
    } catch (const std::bad_alloc&) {
      return {StatusCode::kTooLarge, "q too large for memory"};
    }
    for (std::size_t i = 0; i < q_len; ++i) {
      const auto scale = static_cast<float>(irope_attention_scale(static_cast<double>(p.qpos0) + static_cast<double>(i),
                                                                  o.temperature->floor_scale, o.temperature->attn_scale));
      for (std::size_t h = 0; h < o.n_heads; ++h) {
        float* row = q_rot.data() + (o.heads_major ? (h * q_len + i) : (i * o.n_heads + h)) * o.head_dim;
        for (std::size_t e = 0; e < o.head_dim; ++e) row[e] *= scale;
      }
    }
    p.q = q_rot.data();
  }
  return run(p);
}

double irope_attention_scale(double pos, double floor_scale, double attn_scale) noexcept {
  return std::log(std::floor((pos + 1.0) / floor_scale) + 1.0) * attn_scale + 1.0;
}

}  // namespace posenc
