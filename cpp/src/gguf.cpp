// GGUF (llama.cpp's model files, versions 2 and 3): the header, the metadata and the tensor table,
// then the few small tensors that carry positions: rope_freqs.weight (Llama 3.1's per-pair
// frequency divisors), rope_factors_long/short.weight (LongRoPE, Phi-3), position_embd.weight
// (GPT-2's learned table), enc/dec.blk.0.attn_rel_b.weight (T5's bias table).
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor_count, u64 kv_count; kv_count entries
// of (string key, u32 type, value); tensor_count entries of (string name, u32 n_dims,
// u64 ne[n_dims], u32 ggml_type, u64 offset); padding to general.alignment (default 32); data.
// A string is a u64 length and its bytes; an array is u32 element type, u64 count, elements.
// As llama.cpp's loader, the reader refuses a tensor table whose data offsets do not follow one
// another (in table order, each tensor's ggml_nbytes padded to the alignment), a tensor past the
// end of the file, an undefined ggml type and a name used twice.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "config_json.hpp"
#include "file_bytes.hpp"
#include "posenc/model_file.hpp"

namespace posenc {
namespace {

using nlohmann::json;
using file::Cursor;

enum GgufType : std::uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };

// Bytes of one scalar of a type (0: not a fixed-size scalar).
std::uint64_t scalar_size(std::uint32_t t) {
  switch (t) {
    case kU8:
    case kI8:
    case kBool: return 1;
    case kU16:
    case kI16: return 2;
    case kU32:
    case kI32:
    case kF32: return 4;
    case kU64:
    case kI64:
    case kF64: return 8;
    default: return 0;
  }
}

// Keys and tensor names: llama.cpp's names are at most 64 bytes (GGML_MAX_NAME); 64 KiB is generous.
constexpr std::uint64_t kMaxName = 1u << 16;

bool read_string(Cursor& c, std::string* out, const char* what) {
  std::uint64_t n = 0;
  if (!c.value(&n, what)) return false;
  if (n > kMaxName)
    return c.fail_at(c.offset() - 8, std::string(what) + " of " + std::to_string(n) +
                                         " bytes is longer than the 65536 this reader accepts");
  return c.string(n, out, what);
}

// What the metadata may keep in memory: strings up to 1 MiB, arrays up to 2^16 elements and 2^18
// kept elements in all (the rest is walked over, not stored), so a hostile file cannot make the
// parsed metadata much larger than a real one's.
constexpr std::uint64_t kKeptString = 1u << 20;
constexpr std::uint64_t kKeptTotal = 1u << 18;

// One scalar of type T into *out (a non-finite float as null).
template <class T>
bool read_as(Cursor& c, const char* what, json* out) {
  T v;
  if (!c.value(&v, what)) return false;
  if constexpr (std::is_floating_point_v<T>) *out = std::isfinite(v) ? json(v) : json();
  else *out = v;
  return true;
}

bool read_scalar(Cursor& c, std::uint32_t t, json* out) {
  switch (t) {
    case kU8: return read_as<std::uint8_t>(c, "a u8", out);
    case kI8: return read_as<std::int8_t>(c, "an i8", out);
    case kU16: return read_as<std::uint16_t>(c, "a u16", out);
    case kI16: return read_as<std::int16_t>(c, "an i16", out);
    case kU32: return read_as<std::uint32_t>(c, "a u32", out);
    case kI32: return read_as<std::int32_t>(c, "an i32", out);
    case kU64: return read_as<std::uint64_t>(c, "a u64", out);
    case kI64: return read_as<std::int64_t>(c, "an i64", out);
    case kF32: return read_as<float>(c, "an f32", out);
    case kF64: return read_as<double>(c, "an f64", out);
    case kBool: {
      std::uint8_t v;
      if (!c.value(&v, "a bool")) return false;
      if (v > 1) return c.fail_at(c.offset() - 1, "expected a bool (0 or 1), got " + std::to_string(v));
      *out = v == 1;
      return true;
    }
    default: return c.fail("unknown value type");
  }
}

// Arrays longer than this are skipped, not kept (the tokenizer's vocabulary and merges): no
// positional key is an array that long.
constexpr std::uint64_t kKeptArray = 1u << 16;

// One value of type t. keep = false: walk over it without storing it. *kept counts the array
// elements kept so far (kKeptTotal at most).
bool read_value(Cursor& c, std::uint32_t t, json* out, bool keep, int depth, std::uint64_t* kept) {
  if (t == kString) {
    std::uint64_t n = 0;
    if (!c.value(&n, "a string length")) return false;
    if (!keep || n > kKeptString) return c.skip(n, "a string");
    std::string s;
    if (!c.string(n, &s, "a string")) return false;
    *out = json(std::move(s));
    return true;
  }
  if (t == kArray) {
    if (depth > 4) return c.fail("arrays nested deeper than 4 levels");
    std::uint32_t et = 0;
    std::uint64_t n = 0;
    const std::uint64_t at = c.offset();
    if (!c.value(&et, "an array element type") || !c.value(&n, "an array length")) return false;
    const std::uint64_t width = scalar_size(et);
    if (width == 0 && et != kString && et != kArray)
      return c.fail_at(at, "expected an array element type 0 … 12, got " + std::to_string(et));
    // Every element takes at least `width` bytes (a string or array at least 8 / 12): check the
    // count against what is left before walking or allocating.
    const std::uint64_t least = width != 0 ? width : et == kString ? 8 : 12;
    if (n > c.remaining() / least)
      return c.fail_at(at, "an array of " + std::to_string(n) + " elements needs at least " + std::to_string(n) +
                               " × " + std::to_string(least) + " bytes, more than the " +
                               std::to_string(c.remaining()) + " left in the file");
    keep = keep && n <= kKeptArray && *kept + n <= kKeptTotal;
    if (keep) *kept += n;
    if (width != 0 && !keep) return c.skip(n * width, "array elements");
    if (keep) *out = json::array();
    for (std::uint64_t i = 0; i < n; ++i) {
      json e;
      if (!read_value(c, et, &e, keep, depth + 1, kept)) return false;
      if (keep) out->push_back(std::move(e));
    }
    if (!keep) *out = json();
    return true;
  }
  if (scalar_size(t) == 0) return c.fail_at(c.offset() - 4, "expected a value type 0 … 12, got " + std::to_string(t));
  return read_scalar(c, t, out);
}

struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> ne;  // ne[0] varies fastest
  std::uint32_t type = 0;
  std::uint64_t offset = 0;  // absolute, once the data start is known
};

// ggml's types as libggml 0.27 defines them: bytes per block and values per block (0: removed or
// never defined). Read off the real library (ggml_type_size, ggml_blck_size).
struct GgmlType {
  std::uint32_t size, block;
};
// clang-format off: ten types a row
constexpr GgmlType kGgmlTypes[] = {
    {4, 1},     {2, 1},     {18, 32},   {20, 32},   {0, 0},
    {0, 0},     {22, 32},   {24, 32},   {34, 32},   {36, 32},  // 0-9
    {84, 256},  {110, 256}, {144, 256}, {176, 256}, {210, 256},
    {292, 256}, {66, 256},  {74, 256},  {98, 256},  {50, 256},  // 10-19
    {18, 32},   {110, 256}, {82, 256},  {136, 256}, {1, 1},
    {2, 1},     {4, 1},     {8, 1},     {8, 1},     {56, 256},  // 20-29
    {2, 1},     {0, 0},     {0, 0},     {0, 0},     {54, 256},
    {66, 256},  {0, 0},     {0, 0},     {0, 0},     {17, 32},  // 30-39
    {36, 64},   {18, 128},  {18, 64},                          // 40-42
};
// clang-format on

// The bytes of a tensor's data as ggml computes them (ggml_nbytes), or why it has none.
bool tensor_bytes(const TensorInfo& t, std::uint64_t* bytes, std::string* why) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 62;  // ggml keeps sizes in int64
  const std::size_t n_types = sizeof(kGgmlTypes) / sizeof(kGgmlTypes[0]);
  if (t.type >= n_types || kGgmlTypes[t.type].size == 0) {
    *why = "has ggml type " + std::to_string(t.type) + ", which ggml does not define (types 0 … " +
           std::to_string(n_types - 1) + " as of ggml 0.27, some removed)";
    return false;
  }
  const GgmlType g = kGgmlTypes[t.type];
  if (t.ne[0] % g.block != 0) {
    *why = "has " + std::to_string(t.ne[0]) + " values per row, not a multiple of its type's block of " +
           std::to_string(g.block);
    return false;
  }
  std::uint64_t n = t.ne[0] / g.block * g.size;
  for (std::size_t d = 1; d < t.ne.size(); ++d) {
    if (t.ne[d] != 0 && n > kMax / t.ne[d]) {
      *why = "is larger than 2^62 bytes";
      return false;
    }
    n *= t.ne[d];
  }
  if (t.ne[0] > kMax || n > kMax) {
    *why = "is larger than 2^62 bytes";
    return false;
  }
  *bytes = n;
  return true;
}

const TensorInfo* find(const std::vector<TensorInfo>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// Reads a float tensor (F32, F16, BF16, F64) into out, checking its extent against the file.
bool tensor_floats(const ByteSource& src, const TensorInfo& t, std::uint64_t max_floats, std::vector<float>* out,
                   file::Failure* failure) {
  file::Dtype dtype;
  switch (t.type) {
    case 0: dtype = file::Dtype::kF32; break;
    case 1: dtype = file::Dtype::kF16; break;
    case 28: dtype = file::Dtype::kF64; break;
    case 30: dtype = file::Dtype::kBF16; break;
    default:
      failure->code = StatusCode::kBadArgument;
      failure->detail = "gguf: tensor " + t.name + " has ggml type " + std::to_string(t.type) +
                        "; posenc reads F32 (0), F16 (1), F64 (28) and BF16 (30) tensors";
      return false;
  }
  std::uint64_t count = 1;
  for (std::uint64_t d : t.ne) {
    if (d != 0 && count > max_floats / d) {
      failure->code = StatusCode::kTooLarge;
      failure->detail = "gguf: tensor " + t.name + " holds more than " + std::to_string(max_floats) + " values";
      return false;
    }
    count *= d;
  }
  return file::read_floats(src, t.offset, count, dtype, out, failure, "gguf");
}

// Refuses the file: *detail says why (the status message is the same for every malformed file).
Status malformed(std::string* detail, const std::string& why) {
  if (detail) *detail = why;
  return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
}

// ---- the file: header, metadata, tensor table, data section ---------------------------------------

// A parsed GGUF: its metadata (the tokenizer's keys and overlong arrays left out) and its tensor
// table, offsets absolute; with the bytes, to read the few tensors a scheme needs.
struct Gguf {
  Gguf(const ByteSource& s, const ReadOptions& o) : src(s), options(o) {}
  const ByteSource& src;
  const ReadOptions& options;
  json meta = json::object();
  std::vector<TensorInfo> tensors;
  std::string arch;  // general.architecture, or empty

  std::string key(const char* k) const { return arch + "." + k; }

  // {arch}.k as a whole number (per-layer arrays: their first entry).
  bool count_key(const char* k, std::size_t* v) const {
    const auto it = meta.find(key(k));
    if (it == meta.end()) return false;
    const json* n = it->is_array() && !it->empty() ? &(*it)[0] : &*it;  // per layer: the first
    if (!n->is_number_unsigned() || n->get<std::uint64_t>() > std::min<std::uint64_t>(std::uint64_t{1} << 40, SIZE_MAX))
      return false;
    *v = static_cast<std::size_t>(n->get<std::uint64_t>());
    return true;
  }

  const TensorInfo* tensor(const std::string& name) const { return find(tensors, name); }

  bool read(const TensorInfo& t, std::vector<float>* v, file::Failure* failure) const {
    return tensor_floats(src, t, options.max_table_floats, v, failure);
  }
};

// The header and the metadata; the cursor then stands at the tensor table. n_tensors: its count.
void read_header_and_metadata(Cursor& c, Gguf* g, std::uint64_t* n_tensors) {
  char magic[4] = {};
  std::uint32_t version = 0;
  std::uint64_t n_kv = 0;
  if (c.bytes(magic, 4, "the magic \"GGUF\"") && std::memcmp(magic, "GGUF", 4) != 0)
    c.fail_at(0, "expected the magic \"GGUF\"");
  if (c.value(&version, "the version") && version != 2 && version != 3)
    c.fail_at(4,
              "expected version 2 or 3, got " + std::to_string(version) +
                  (version == 1 ? " (GGUF v1 files predate llama.cpp's August 2023 format; convert them again)" : ""));
  c.value(n_tensors, "the tensor count");
  c.value(&n_kv, "the metadata count");
  // The smallest entry is 13 bytes (empty key, type, 1-byte value); a tensor 24 bytes.
  if (!c.failed() && n_kv > c.remaining() / 13)
    c.fail_at(16, "a metadata count of " + std::to_string(n_kv) + " cannot fit in the " +
                      std::to_string(c.remaining()) + " bytes left");
  if (!c.failed() && *n_tensors > c.remaining() / 24)
    c.fail_at(8, "a tensor count of " + std::to_string(*n_tensors) + " cannot fit in the " +
                     std::to_string(c.remaining()) + " bytes left");

  std::uint64_t kept = 0;
  for (std::uint64_t i = 0; i < n_kv && !c.failed(); ++i) {
    std::string key;
    std::uint32_t type = 0;
    if (!read_string(c, &key, "a metadata key") || !c.value(&type, "a value type")) break;
    json v;
    const bool keep = key.rfind("tokenizer.", 0) != 0;  // the vocabulary: never needed here
    if (!read_value(c, type, &v, keep, 0, &kept)) break;
    if (g->meta.contains(key)) {  // llama.cpp refuses such files too
      c.fail("metadata key " + key + " appears twice");
      break;
    }
    if (keep && !v.is_null()) g->meta[key] = std::move(v);
  }
}

// The tensor table's n_tensors entries (offsets relative to the data section).
void read_tensor_table(Cursor& c, std::uint64_t n_tensors, std::vector<TensorInfo>* tensors) {
  if (!c.failed())
    tensors->reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_tensors, 4096)));  // grows as read
  for (std::uint64_t i = 0; i < n_tensors && !c.failed(); ++i) {
    TensorInfo t;
    std::uint32_t n_dims = 0;
    if (!read_string(c, &t.name, "a tensor name")) break;
    const std::uint64_t dims_at = c.offset();
    if (!c.value(&n_dims, "a tensor's dimension count")) break;
    if (n_dims == 0 || n_dims > 4) {
      c.fail_at(dims_at, "tensor " + t.name + ": expected 1 … 4 dimensions, got " + std::to_string(n_dims));
      break;
    }
    t.ne.resize(n_dims);
    for (auto& d : t.ne) c.value(&d, "a tensor dimension");
    c.value(&t.type, "a tensor type");
    c.value(&t.offset, "a tensor offset");
    tensors->push_back(std::move(t));
  }
}

// The data section as llama.cpp's loader (ggml's gguf reader) requires it: each tensor's data
// follows the previous one's in table order, padded to general.alignment, starting at 0, and lies
// inside the file. So no tensor can point at another's data. Makes the offsets absolute.
Status place_tensor_data(const Gguf& g, std::uint64_t table_end, std::vector<TensorInfo>* tensors,
                         std::string* detail) {
  std::uint64_t alignment = 32;
  if (const auto it = g.meta.find("general.alignment"); it != g.meta.end()) {
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0 || it->get<std::uint64_t>() > (1u << 20) ||
        (it->get<std::uint64_t>() & (it->get<std::uint64_t>() - 1)) != 0)
      return malformed(detail, "gguf: general.alignment must be a power of two up to 2^20");
    alignment = it->get<std::uint64_t>();
  }
  const std::uint64_t size = g.src.size;
  const std::uint64_t data_start = (table_end + alignment - 1) / alignment * alignment;
  std::uint64_t expected = 0;
  std::vector<std::string_view> names;
  names.reserve(tensors->size());
  for (auto& t : *tensors) {
    const std::string name = "gguf: tensor " + t.name + " ";
    names.push_back(t.name);
    std::uint64_t bytes = 0;
    std::string why;
    if (!tensor_bytes(t, &bytes, &why)) return malformed(detail, name + why);
    if (t.offset != expected)
      return malformed(detail, name + "has data offset " + std::to_string(t.offset) + ", expected " +
                                   std::to_string(expected) +
                                   " (tensor data follows the table in order, each padded to general.alignment = " +
                                   std::to_string(alignment) + "; llama.cpp refuses the file too)");
    if (data_start > size || t.offset > size - data_start || bytes > size - data_start - t.offset)
      return malformed(detail, name + "at data offset " + std::to_string(t.offset) + " (" + std::to_string(bytes) +
                                   " bytes from byte " + std::to_string(data_start + t.offset) +
                                   ") ends past the end of the file (" + std::to_string(size) + " bytes)");
    expected += (bytes + alignment - 1) / alignment * alignment;
    t.offset += data_start;
  }
  std::sort(names.begin(), names.end());
  if (const auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end())
    return malformed(detail, "gguf: tensor name " + std::string(*dup) + " appears twice");
  return Status::Ok();
}

Status parse_gguf(Gguf* g, std::string* detail) {
  Cursor c(g->src, "gguf");
  std::uint64_t n_tensors = 0;
  read_header_and_metadata(c, g, &n_tensors);
  read_tensor_table(c, n_tensors, &g->tensors);
  if (c.failed()) return file::status_of(c.failure(), detail);
  if (Status s = place_tensor_data(*g, c.offset(), &g->tensors, detail); !s.ok()) return s;
  if (const auto it = g->meta.find("general.architecture"); it != g->meta.end() && it->is_string()) g->arch = *it;
  return Status::Ok();
}

// ---- one detector per scheme ----------------------------------------------------------------------

// Learned positions (GPT-2, ...): position_embd.weight, ne = [n_embd, n_ctx] (or the table asked for).
Status detect_learned(const Gguf& g, ModelInfo* info, std::string* detail) {
  const std::string table_name = g.options.table_name.empty() ? "position_embd.weight" : g.options.table_name;
  const TensorInfo* t = g.tensor(table_name);
  if (!g.options.table_name.empty() && t == nullptr) return malformed(detail, "gguf: no tensor named " + table_name);
  if (t == nullptr) return Status::Ok();
  if (t->ne.size() != 2 || t->ne[0] == 0 || t->ne[1] == 0)
    return malformed(detail, "gguf: tensor " + t->name + " must have 2 non-zero dimensions to be a position table");
  PositionTable table{t->name, static_cast<std::size_t>(t->ne[1]), static_cast<std::size_t>(t->ne[0]), {}};
  file::Failure failure;
  if (!g.read(*t, &table.weights, &failure)) return file::status_of(failure, detail);
  info->position_table = std::move(table);
  return Status::Ok();
}

// ALiBi: BLOOM and MPT (and anything that states a max bias).
void detect_alibi(const Gguf& g, ModelInfo* info) {
  const auto alibi_key = g.meta.find(g.key("attention.max_alibi_bias"));
  const bool stated = alibi_key != g.meta.end() && alibi_key->is_number() && alibi_key->get<double>() > 0;
  if (!(g.arch == "bloom" || g.arch == "mpt" || stated)) return;
  AlibiInfo a;
  a.n_heads = info->n_heads;
  if (stated) a.max_bias = alibi_key->get<double>();
  else if (g.arch == "mpt") info->warnings.push_back(g.key("attention.max_alibi_bias") + " is missing: assumed 8");
  if (a.n_heads == 0)
    info->warnings.push_back(g.key("attention.head_count") + " is missing: ALiBi needs the head count");
  info->alibi = a;
}

// T5: relative buckets; llama.cpp fixes the max distance at 128.
Status detect_t5(const Gguf& g, ModelInfo* info, std::string* detail) {
  if (g.arch != "t5" && g.arch != "t5encoder") return Status::Ok();
  T5Info t5;
  t5.n_heads = info->n_heads;
  std::size_t buckets = 32;
  if (!g.count_key("attention.relative_buckets_count", &buckets))
    info->warnings.push_back(g.key("attention.relative_buckets_count") + " is missing: assumed 32");
  t5.num_buckets = static_cast<int>(std::min<std::size_t>(buckets, 1u << 20));
  // The encoder's table (bidirectional) if present, else the decoder's.
  for (const char* name : {"enc.blk.0.attn_rel_b.weight", "dec.blk.0.attn_rel_b.weight"}) {
    const TensorInfo* t = g.tensor(name);
    if (t == nullptr) continue;
    // ne = [n_head, n_buckets]: row-major [n_buckets][n_head], HF's layout.
    if (t->ne.size() != 2 || t->ne[1] != buckets) {
      info->warnings.push_back(std::string(name) + " does not have shape [" + std::to_string(buckets) +
                               "][n_heads]: not read");
      break;
    }
    t5.name = name;
    t5.bidirectional = name[0] == 'e';
    t5.n_heads = static_cast<std::size_t>(t->ne[0]);
    file::Failure failure;
    if (!g.read(*t, &t5.table, &failure)) return file::status_of(failure, detail);
    break;
  }
  info->t5 = std::move(t5);
  return Status::Ok();
}

// A per-pair tensor of RoPE (Llama 3.1's divisors, LongRoPE's factors): rot_dim / 2 finite values
// > 0 into *dst, or nothing when the file has no such tensor.
bool rope_pair_tensor(const Gguf& g, const char* name, std::size_t half, std::vector<double>* dst,
                      file::Failure* failure) {
  const TensorInfo* t = g.tensor(name);
  if (t == nullptr) return true;
  std::uint64_t n = 1;
  for (auto d : t->ne) n *= d;
  if (t->ne.size() != 1 || n != half) {
    *failure = {StatusCode::kBadArgument, "gguf: tensor " + std::string(name) + " has " + std::to_string(n) +
                                              " values, expected rot_dim / 2 = " + std::to_string(half)};
    return false;
  }
  std::vector<float> v;
  if (!g.read(*t, &v, failure)) return false;
  for (float f : v)
    if (!(std::isfinite(f) && f > 0)) {
      *failure = {StatusCode::kBadArgument,
                  "gguf: tensor " + std::string(name) + " holds a value that is not finite and > 0"};
      return false;
    }
  dst->assign(v.begin(), v.end());
  return true;
}

// RoPE: any architecture that states a RoPE dimension or base, and every one that is not
// learned/ALiBi/T5 (llama.cpp's default for RoPE models).
Status detect_rope(const Gguf& g, ModelInfo* info, std::string* detail) {
  const bool states_rope = g.meta.contains(g.key("rope.dimension_count")) || g.meta.contains(g.key("rope.freq_base"));
  if (!states_rope && (info->position_table || info->alibi || info->t5 || g.arch.empty())) return Status::Ok();
  RopeParams p;
  std::string why;
  if (const Status s = config_json::rope_params_from_gguf(g.meta, "", &p, &why, &info->warnings); !s.ok()) {
    if (detail) *detail = why;
    return s;
  }
  const std::size_t half = rope_rot_dim(p) / 2;
  file::Failure failure;
  std::vector<double> lf, sf;
  if (!rope_pair_tensor(g, "rope_freqs.weight", half, &p.freq_factors, &failure) ||
      !rope_pair_tensor(g, "rope_factors_long.weight", half, &lf, &failure) ||
      !rope_pair_tensor(g, "rope_factors_short.weight", half, &sf, &failure))
    return file::status_of(failure, detail);
  if (!lf.empty() || !sf.empty()) {
    if (lf.empty() || sf.empty()) {
      info->warnings.push_back(
          "only one of rope_factors_long.weight and rope_factors_short.weight is present: LongRoPE not applied");
    } else {
      config_json::gguf_longrope(g.meta, g.arch, std::move(sf), std::move(lf), &p, &info->warnings);
    }
  }
  info->rope = std::move(p);
  if (g.meta.contains(g.key("rope.freq_base_swa"))) {
    RopeParams q;
    if (config_json::rope_params_from_gguf(g.meta, "sliding_attention", &q, &why, nullptr).ok())
      info->rope_sliding = std::move(q);
  }
  return Status::Ok();
}

// What every model states whatever its scheme: sizes, and the tensor table as a list.
void describe(const Gguf& g, ModelInfo* info) {
  info->format = ModelFormat::kGguf;
  info->architecture = g.arch;
  g.count_key("attention.head_count", &info->n_heads);
  g.count_key("attention.head_count_kv", &info->n_kv_heads);
  g.count_key("context_length", &info->context_length);
  g.count_key("embedding_length", &info->d_model);
  g.count_key("attention.sliding_window", &info->sliding_window);
  for (const auto& t : g.tensors) {
    const char* names[] = {"F32", "F16"};
    std::string dtype = t.type < 2     ? names[t.type]
                        : t.type == 28 ? "F64"
                        : t.type == 30 ? "BF16"
                                       : "ggml type " + std::to_string(t.type);
    info->tensors.push_back({t.name, dtype, std::vector<std::uint64_t>(t.ne.rbegin(), t.ne.rend())});
  }
}

}  // namespace

Status read_gguf(const ByteSource& src, ModelInfo* out, std::string* detail, const ReadOptions& options) noexcept {
  if (out == nullptr || src.read == nullptr) return {StatusCode::kBadArgument, "out and src.read must not be null"};
  try {
    Gguf g{src, options};
    if (Status s = parse_gguf(&g, detail); !s.ok()) return s;
    ModelInfo info;
    describe(g, &info);
    if (Status s = detect_learned(g, &info, detail); !s.ok()) return s;
    detect_alibi(g, &info);
    if (Status s = detect_t5(g, &info, detail); !s.ok()) return s;
    if (Status s = detect_rope(g, &info, detail); !s.ok()) return s;
    *out = std::move(info);
    return Status::Ok();
  } catch (...) {  // std::bad_alloc
    return {StatusCode::kTooLarge, "model file: out of memory"};
  }
}

}  // namespace posenc
