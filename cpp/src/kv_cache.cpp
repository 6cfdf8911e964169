// The KV cache's storage (posenc/kv_cache.hpp): creation and its checks, append with RoPE and
// eviction, llama.cpp's context shift, read-back. attend() is in kv_attend.cpp.
//
// Slots: without a window, the index-th token held sits in slot index. With a window, slots
// [0, sink_tokens) hold the sinks and [sink_tokens, capacity) a ring whose oldest token is at
// sink_tokens + ring_start_. Storage is heads major, [n_kv_heads][capacity][head_dim], so that
// one head's keys are contiguous for the decode read.
#include "posenc/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <optional>

#include "attention_engine.hpp"
#include "half.hpp"
#include "kernels/kernels.hpp"
#include "rope_rules.hpp"

namespace posenc {

namespace {
constexpr double kMaxPos = 9007199254740992.0;  // 2^53

// The storage's bytes: positions (8 each), then keys and values (4 or 2 each); counted in 64 bits,
// so that a size that wraps a 32-bit size_t (WebAssembly) is refused, not allocated short.
// Precondition: the sizes are > 0.
Status store_bytes(const KvCacheOptions& o, std::uint64_t* total, std::uint64_t* kv) {
  const std::uint64_t n = std::uint64_t{o.capacity} * o.n_kv_heads * o.head_dim;
  const std::uint64_t elem = o.dtype == DType::kFloat16 ? 2 : 4;
  const bool overflow = n / o.capacity / o.n_kv_heads != o.head_dim || n > (std::uint64_t{1} << 56);
  *kv = overflow ? 0 : n * elem;
  *total = overflow ? 0 : std::uint64_t{o.capacity} * 8 + 2 * n * elem;
  if (overflow || *total > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    return {StatusCode::kTooLarge, "the cache (2 * capacity * n_kv_heads * head_dim values) does not fit in memory"};
  return Status::Ok();
}

}  // namespace

KvCache::~KvCache() = default;

Status KvCache::create_check(const KvCacheOptions& o) noexcept {
  if (o.n_kv_heads == 0) return bad("n_kv_heads must be > 0");
  if (o.head_dim == 0) return bad("head_dim must be > 0");
  if (o.capacity == 0) return bad("capacity must be > 0");
  if (o.dtype != DType::kFloat32 && o.dtype != DType::kFloat16) return bad("dtype must be float32 or float16");
  if (o.sink_tokens != 0 && o.window == 0) return bad("sink_tokens needs a window");
  if (o.window != 0 && (o.window > o.capacity || o.sink_tokens > o.capacity - o.window))
    return bad("capacity must be >= sink_tokens + window");
  std::uint64_t total = 0, kv = 0;
  return store_bytes(o, &total, &kv);
}

Status KvCache::create(const KvCacheOptions& o, std::unique_ptr<KvCache>* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  out->reset();
  if (Status s = create_check(o); !s.ok()) return s;
  if (o.rope_inv_freq != nullptr) {
    if (o.rope.xpos != nullptr) return bad("the cache's rope does not take xpos");
    // The rotation's rules are apply_rope's, which rotate_at runs on every key and query: asked
    // here once, in its words (positions come with append and attend).
    if (Status s = apply_rope_check(o.capacity, o.n_kv_heads, o.head_dim, o.rope_rot_dim, std::nullopt, o.rope);
        !s.ok())
      return s;
    if (Status s = check_inv_freq(o.rope_inv_freq, o.rope_rot_dim); !s.ok()) return s;
  }
  std::uint64_t total = 0, n_bytes = 0;
  if (Status s = store_bytes(o, &total, &n_bytes); !s.ok()) return s;
  std::unique_ptr<KvCache> c(new (std::nothrow) KvCache());
  if (!c) return {StatusCode::kTooLarge, "out of memory"};
  try {
    c->o_ = o;
    if (o.rope_inv_freq != nullptr) {
      c->inv_freq_.assign(o.rope_inv_freq, o.rope_inv_freq + o.rope_rot_dim / 2);
      c->o_.rope_inv_freq = c->inv_freq_.data();
      if (o.rope.ggml != nullptr) {
        c->ggml_ = *o.rope.ggml;
        c->o_.rope.ggml = &c->ggml_;
      }
    }
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "out of memory"};
  }
  c->store_.reset(new (std::nothrow) unsigned char[static_cast<std::size_t>(total)]);
  if (!c->store_)
    return {StatusCode::kTooLarge, "the cache (2 * capacity * n_kv_heads * head_dim values) does not fit in memory"};
  unsigned char* at = c->store_.get();
  c->pos_ = reinterpret_cast<double*>(at);
  at += o.capacity * sizeof(double);
  const auto kv = static_cast<std::size_t>(n_bytes);
  if (o.dtype == DType::kFloat16) {
    c->k16_ = reinterpret_cast<std::uint16_t*>(at);
    c->v16_ = reinterpret_cast<std::uint16_t*>(at + kv);
  } else {
    c->k32_ = reinterpret_cast<float*>(at);
    c->v32_ = reinterpret_cast<float*>(at + kv);
  }
  *out = std::move(c);
  return Status::Ok();
}

std::size_t KvCache::bytes() const noexcept {
  const std::size_t elem = o_.dtype == DType::kFloat16 ? 2 : 4;
  return 2 * o_.capacity * o_.n_kv_heads * o_.head_dim * elem + o_.capacity * sizeof(double);
}

std::size_t KvCache::slot(std::size_t index) const noexcept {
  const std::size_t s = o_.sink_tokens;
  if (index < s) return index;
  return s + (ring_start_ + (index - s)) % (o_.capacity - s);
}

// x [n][heads][head_dim] turned by RoPE at pos[n]; gain_one: with gain 1 (a shift of keys that
// already carry the attention factor — llama.cpp's K-shift, and shift_keys).
Status KvCache::rotate_at(float* x, std::size_t n, std::size_t heads, const double* pos, bool gain_one) const noexcept {
  if (o_.rope_inv_freq == nullptr) return Status::Ok();
  RopeApplyOptions ro = o_.rope;
  GgmlRope g;
  if (gain_one) {
    ro.attention_factor = 1.0;
    if (ro.precision == Precision::kGgml) {
      try {
        g = ggml_;
      } catch (const std::bad_alloc&) {
        return {StatusCode::kTooLarge, "out of memory"};
      }
      // ggml's gain is attn_factor · (1 + 0.1 ln(1/freq_scale)) with YaRN's ramp, else attn_factor.
      g.attn_factor = g.ext_factor != 0.0f ? 1.0f / (1.0f + 0.1f * std::log(1.0f / g.freq_scale)) : 1.0f;
      ro.ggml = &g;
    }
  }
  return apply_rope(x, n, heads, o_.head_dim, o_.rope_inv_freq, o_.rope_rot_dim, pos, 0.0, ro);
}

Status KvCache::append(const float* k, const float* v, std::size_t n, const double* positions) noexcept {
  if (n == 0) return bad("n_tokens must be > 0");
  if (k == nullptr || v == nullptr) return bad("k and v must not be null");
  if (o_.window == 0 && n > o_.capacity - length_)
    return bad("the cache is full: length + n_tokens must be <= capacity (shift it, or give it a window)");
  const std::size_t H = o_.n_kv_heads, d = o_.head_dim, row = H * d, cap = o_.capacity;
  std::vector<double> pos;
  try {
    pos.resize(n);
    scratch_.assign(k, k + n * row);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "n_tokens too large for memory"};
  }
  double prev = next_pos_ - 1;
  for (std::size_t s = 0; s < n; ++s) {
    const double p = positions ? positions[s] : prev + 1;
    if (!(p >= 0 && p < kMaxPos && p == std::floor(p))) return bad("positions must be integers in [0, 2^53)");
    if (p <= prev) return bad("positions must rise: each above the last one appended");
    pos[s] = prev = p;
  }
  if (Status st = rotate_at(scratch_.data(), n, H, pos.data(), false); !st.ok()) return st;

  for (std::size_t s = 0; s < n; ++s) {
    if (length_ == cap) {  // a window's ring is full: evict its oldest token
      const std::size_t oldest = o_.sink_tokens + ring_start_;
      evicted_max_ = pos_[oldest];
      ring_start_ = (ring_start_ + 1) % (cap - o_.sink_tokens);
      --length_;
    }
    const std::size_t sl = slot(length_);
    pos_[sl] = pos[s];
    for (std::size_t h = 0; h < H; ++h) {
      const float* ks = scratch_.data() + s * row + h * d;
      const float* vs = v + s * row + h * d;
      const std::size_t at = (h * cap + sl) * d;
      if (o_.dtype == DType::kFloat16) {
        for (std::size_t e = 0; e < d; ++e) {
          k16_[at + e] = half::from_float(ks[e]);
          v16_[at + e] = half::from_float(vs[e]);
        }
      } else {
        std::memcpy(k32_ + at, ks, d * sizeof(float));
        std::memcpy(v32_ + at, vs, d * sizeof(float));
      }
    }
    ++length_;
  }
  next_pos_ = prev + 1;
  return Status::Ok();
}

Status KvCache::shift(std::int64_t delta, std::int64_t keep) noexcept {
  if (o_.window != 0) return bad("shift works on a cache without a window (a window's ring evicts by itself)");
  const double k0 = static_cast<double>(keep), dd = static_cast<double>(delta);
  if (!(k0 >= 0 && k0 < kMaxPos)) return bad("keep must be a position in [0, 2^53)");
  if (!(std::fabs(dd) < kMaxPos)) return bad("delta must be in (-2^53, 2^53)");
  if (delta > 0 && length_ != 0 && pos_[length_ - 1] + dd >= kMaxPos) return bad("delta moves positions past 2^53");
  if (delta == 0) return Status::Ok();
  // Without a window, slot t holds the t-th token and positions rise with t.
  const std::size_t H = o_.n_kv_heads, d = o_.head_dim, cap = o_.capacity;
  const auto index_of = [&](double p) {
    return static_cast<std::size_t>(std::lower_bound(pos_, pos_ + length_, p) - pos_);
  };
  const std::size_t to_index = index_of(k0);                           // the first token that moves or goes
  const std::size_t first = delta < 0 ? index_of(k0 - dd) : to_index;  // the first token that moves
  const std::size_t drop = first - to_index, moved = length_ - first;
  std::vector<double> by;
  try {
    by.assign(moved, dd);
    scratch_.resize(moved * d);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "out of memory"};
  }
  for (std::size_t h = 0; h < H && moved != 0; ++h) {
    const std::size_t from = (h * cap + first) * d, to = (h * cap + to_index) * d;
    float* x = scratch_.data();
    if (o_.dtype == DType::kFloat16) {
      kernels::widen_half(x, k16_ + from, moved * d);
    } else {
      std::memcpy(x, k32_ + from, moved * d * sizeof(float));
    }
    if (Status st = rotate_at(x, moved, 1, by.data(), true); !st.ok()) return st;
    if (o_.dtype == DType::kFloat16) {
      for (std::size_t e = 0; e < moved * d; ++e) k16_[to + e] = half::from_float(x[e]);
      std::memmove(v16_ + to, v16_ + from, moved * d * sizeof(std::uint16_t));
    } else {
      std::memcpy(k32_ + to, x, moved * d * sizeof(float));
      std::memmove(v32_ + to, v32_ + from, moved * d * sizeof(float));
    }
  }
  for (std::size_t t = 0; t < moved; ++t) pos_[to_index + t] = pos_[first + t] + dd;
  length_ -= drop;
  // Appends go on after the last position held (llama.cpp's n_past -= n_discard); an emptied
  // cache starts again at the first position dropped, or where it would have gone on.
  next_pos_ = length_ != 0 ? pos_[length_ - 1] + 1 : std::min(next_pos_, k0);
  return Status::Ok();
}

void KvCache::read(float* k, float* v, double* positions) const noexcept {
  const std::size_t H = o_.n_kv_heads, d = o_.head_dim, cap = o_.capacity;
  for (std::size_t t = 0; t < length_; ++t) {
    const std::size_t sl = slot(t);
    if (positions) positions[t] = pos_[sl];
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t at = (h * cap + sl) * d, dst = (t * H + h) * d;
      if (o_.dtype == DType::kFloat16) {
        if (k) kernels::widen_half(k + dst, k16_ + at, d);
        if (v) kernels::widen_half(v + dst, v16_ + at, d);
      } else {
        if (k) std::memcpy(k + dst, k32_ + at, d * sizeof(float));
        if (v) std::memcpy(v + dst, v32_ + at, d * sizeof(float));
      }
    }
  }
}

}  // namespace posenc
