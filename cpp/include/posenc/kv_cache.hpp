// posenc: a KV cache for decoding — keys rotated once at their positions when appended, stored
// float32 or float16, attention for a few new queries against all of it (split over the cache and
// the thread pool: flash-decoding), llama.cpp's context shift, and HF's sliding-window eviction with
// StreamingLLM's sink tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "posenc/attention.hpp"
#include "posenc/onnx.hpp"
#include "posenc/rope.hpp"
#include "posenc/status.hpp"

namespace posenc {

struct KvCacheOptions {
  std::size_t n_kv_heads = 0;
  std::size_t head_dim = 0;
  std::size_t capacity = 0;       // tokens held at most
  DType dtype = DType::kFloat32;  // kFloat16: keys (rotated in float32 first) and values stored as float16
  // RoPE (none when rope_inv_freq is null): keys turn at their positions on append, queries at
  // theirs in attend — every layout, precision (kGgml too), offset and attention factor apply_rope
  // takes; not xPos. The cache keeps copies of inv_freq and ggml.
  const double* rope_inv_freq = nullptr;  // [rope_rot_dim / 2]
  std::size_t rope_rot_dim = 0;
  RopeApplyOptions rope;
  // Sliding window (HF's sliding_window): a query at qpos sees keys at qpos - window < pos; the
  // cache then holds a ring, and an append to a full cache evicts the oldest token (after the
  // sinks). Needs capacity >= sink_tokens + window. 0: no window, appends past capacity are refused.
  std::size_t window = 0;
  // StreamingLLM (Xiao et al. 2023): the first sink_tokens tokens appended are never evicted and
  // stay visible to every query, at the positions they were appended with. Needs a window.
  std::size_t sink_tokens = 0;
};

// The positional bias terms (PositionBias, attention.hpp) as attention() adds them, at the
// queries' and the keys' positions: alibi_slopes [n_heads], and t5_table [num_buckets][n_heads]
// with t5 (bucket of key pos - query pos; t5.bidirectional false for a decoder).
struct KvAttendOptions : PositionBias {
  std::size_t n_heads = 0;            // query heads: a multiple of n_kv_heads (GQA, MQA)
  const double* positions = nullptr;  // [q_len] the queries' positions; null: those of the
                                      //   last q_len tokens appended
  bool causal = true;                 // a key at pos is visible to a query at qpos iff pos <= qpos
  std::optional<double> scale;        // default 1/sqrt(head_dim)
  double softcap = 0.0;               // > 0: scores become softcap * tanh(score / softcap)
  const float* sinks = nullptr;       // [n_heads]: gpt-oss's learned sink logit (no value)
};

// Not thread-safe: one call at a time per cache (each call uses the thread pool itself).
class KvCache {
 public:
  // The storage (2 · capacity · n_kv_heads · head_dim elements) is checked and allocated here,
  // once: kTooLarge if it does not fit in memory; kBadArgument naming the rule otherwise (RoPE's:
  // apply_rope_check's, with its messages, and a finite inv_freq).
  static Status create(const KvCacheOptions& options, std::unique_ptr<KvCache>* out) noexcept;
  // create()'s rules that need no table — every one but the RoPE's (its table, and where it sits,
  // which apply_rope_check states): the sizes, dtype, the window and sink tokens within capacity, and
  // the storage within memory. create() runs it first; a caller can run it before it allocates (the
  // JS layer does).
  static Status create_check(const KvCacheOptions& options) noexcept;

  // k and v [n_tokens][n_kv_heads][head_dim] float32 (tokens major, as apply_rope takes them).
  // Token s is at positions[s] (null: one after the last position appended, 0 for the first);
  // positions are integers in [0, 2^53) and rise strictly, across calls too. Keys turn by RoPE at
  // their positions. Without a window, length + n_tokens must be <= capacity; with one, the
  // oldest tokens past the sinks are evicted. Time O(n_tokens), whatever the length.
  Status append(const float* k, const float* v, std::size_t n_tokens, const double* positions) noexcept;

  // q [q_len][n_heads][head_dim] float32; out [q_len][n_heads][head_dim]. Attention of the queries
  // over every token held: equal (to float32 rounding) to attention() over the same keys and
  // values at the same positions. Queries turn by RoPE at their positions. kBadArgument if the
  // window of a query reaches a token already evicted (capacity < sink_tokens + window + q_len - 1).
  Status attend(const float* q, std::size_t q_len, const KvAttendOptions& options, float* out) noexcept;
  // attend()'s argument rules that need no tensor — every one but the null tensors and the
  // queries' positions' values, in attend()'s order (the values sinks and alibi_slopes point at are
  // read when given). attend() runs it first; a caller can run it before it allocates (the JS layer).
  Status attend_check(std::size_t q_len, const KvAttendOptions& options) const noexcept;

  // llama.cpp's context shift (its seq_rm(keep, keep - delta) and seq_add(keep - delta, ∞, delta)),
  // by position: delta < 0 drops the tokens at positions [keep, keep - delta) and moves every token
  // at keep - delta or later back by -delta; delta > 0 moves the tokens at keep or later on by delta.
  // Moved keys are rotated by delta with gain 1 (the attention factor already in them is kept).
  // With positions 0 … length-1 (the default), shift(-n, length - n) drops the last n tokens
  // (rejected drafts). Appends then go on after the last position held. A cache with a window is
  // refused (its ring moves by eviction). Time O(moved tokens · n_kv_heads · head_dim).
  Status shift(std::int64_t delta, std::int64_t keep) noexcept;

  // The tokens held, oldest first: k and v [length][n_kv_heads][head_dim] float32 (keys as
  // rotated; float16 widened exactly), positions [length]. Any pointer may be null.
  void read(float* k, float* v, double* positions) const noexcept;

  std::size_t length() const noexcept { return length_; }
  std::size_t capacity() const noexcept { return o_.capacity; }
  std::size_t bytes() const noexcept;  // the storage of keys, values and positions
  const KvCacheOptions& options() const noexcept { return o_; }

  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;
  ~KvCache();

 private:
  KvCache() = default;
  std::size_t slot(std::size_t index) const noexcept;  // storage slot of the index-th token held
  Status rotate_at(float* x, std::size_t n, std::size_t heads, const double* pos, bool gain_one) const noexcept;

  KvCacheOptions o_;
  std::vector<double> inv_freq_;
  GgmlRope ggml_;
  // One allocation, made with new (std::nothrow) so that a cache too large for the heap is a
  // status, not an abort (WebAssembly builds do not catch exceptions), and either all of it or
  // none: a WebAssembly heap that grew for half a cache would stay grown.
  std::unique_ptr<unsigned char[]> store_;
  double* pos_ = nullptr;                          // [capacity] the position of the token in each slot
  float *k32_ = nullptr, *v32_ = nullptr;          // [n_kv_heads][capacity][head_dim] (heads major: each
  std::uint16_t *k16_ = nullptr, *v16_ = nullptr;  //   head's keys contiguous for the decode read)
  std::size_t length_ = 0;
  std::size_t ring_start_ = 0;  // window: the ring slot of the oldest non-sink token
  double next_pos_ = 0;         // one after the last position appended
  double evicted_max_ = -1;     // the highest position evicted (-1: none)
  std::vector<float> scratch_;  // append's rotated keys; attend's queries and partials
};

}  // namespace posenc
