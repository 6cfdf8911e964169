// posenc: the positional settings of real model files — GGUF (llama.cpp), safetensors (Hugging
// Face weights), NumPy .npy (a bare table) and config.json text — read without loading the file.
//
// A file is reached through a ByteSource: its size and a "read these bytes" callback. The readers
// validate every count and length in a header against the file size before they allocate, read
// only the header and the few small tensors they need (RoPE frequency factors, LongRoPE factors,
// a learned position table, a T5 bias table), and never the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posenc/rope_config.hpp"
#include "posenc/rope.hpp"
#include "posenc/status.hpp"

namespace posenc {

struct ByteSource {
  std::uint64_t size = 0;  // the file's size in bytes
  void* user = nullptr;
  // Copies bytes [offset, offset + n) (always within size) to dst; returns false if they cannot
  // be had now — the reader then fails with StatusCode::kUnavailable, and the caller may supply
  // them and read again (the JS layer does so for Blobs, which are read asynchronously).
  bool (*read)(void* user, std::uint64_t offset, std::size_t n, std::uint8_t* dst) = nullptr;
};

enum class ModelFormat : int { kGguf = 0, kSafetensors, kNpy, kConfig };

// "gguf", "safetensors", "npy", "config".
const char* model_format_name(ModelFormat format) noexcept;

// A learned absolute position table, weights[max_len][d_model] (float32, converted from F16/BF16).
struct PositionTable {
  std::string name;  // the tensor's name in the file ("position_embd.weight", "wpe.weight", ...)
  std::size_t max_len = 0;
  std::size_t d_model = 0;
  std::vector<float> weights;  // empty when only the shape is known (a config.json)
};

struct AlibiInfo {
  std::size_t n_heads = 0;
  double max_bias = 8.0;
};

struct T5Info {
  std::size_t n_heads = 0;
  int num_buckets = 32;
  int max_distance = 128;
  bool bidirectional = true;
  std::string name;          // the bias tensor's name, if the file holds one
  std::vector<float> table;  // [num_buckets][n_heads] (HF's relative_attention_bias.weight), or empty
};

// Llama 4's interleaved RoPE (iRoPE): RoPE layers with chunked local attention, NoPE layers
// with the attention temperature (see AttentionOptions::chunk_size, ::temperature).
struct IropeInfo {
  std::size_t chunk_size = 0;   // attention_chunk_size, 0 if absent
  double floor_scale = 8192.0;  // HF Llama4TextConfig defaults
  double attn_scale = 0.1;
  bool temperature_tuning = true;  // attn_temperature_tuning
  std::vector<bool> rope_layers;   // per layer: true = RoPE (no_rope_layers, or every 4th layer NoPE)
};

// A tensor the file holds (its shape row-major, slowest dimension first).
struct TensorEntry {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "F64", ... (GGUF: "ggml type N" for the others)
  std::vector<std::uint64_t> shape;
};

struct ModelInfo {
  ModelFormat format = ModelFormat::kConfig;
  std::string architecture;  // general.architecture, model_type, or "" when the file does not say
  std::size_t n_heads = 0;   // query heads, 0 if unknown
  std::size_t n_kv_heads = 0;
  std::size_t context_length = 0;  // max_position_embeddings / {arch}.context_length, 0 if unknown
  std::size_t d_model = 0;         // hidden_size, n_embd, d_model or dim / {arch}.embedding_length, 0 if unknown
  std::optional<RopeParams> rope;  // for the (full-attention) RoPE layers
  std::optional<RopeParams> rope_sliding;  // sliding-window layers, where they differ (Gemma 3)
  std::size_t sliding_window = 0;          // keys before each query in sliding layers, 0 = none
  std::optional<AlibiInfo> alibi;
  std::optional<T5Info> t5;
  std::optional<PositionTable> position_table;
  std::optional<IropeInfo> irope;     // Llama 4 (config.json)
  std::vector<TensorEntry> tensors;   // every tensor of a GGUF, safetensors or .npy file
  std::vector<std::string> warnings;  // what the reader could not interpret, naming the keys
};

struct ReadOptions {
  // Position tables larger than this many floats are refused (they are learned tables: real ones
  // hold at most a few million values; the limit keeps a hostile header from costing memory).
  std::size_t max_table_floats = std::size_t{1} << 26;
  // The 2-D tensor to read as the learned position table (safetensors, GGUF); "" = the one named
  // like a position embedding (wpe.weight, *position_embeddings.weight, position_embd.weight, ...).
  std::string table_name;
};

// Reads any of the formats, told apart by their first bytes ("GGUF", "\x93NUMPY", a safetensors
// length + '{', else JSON text). Status: kBadArgument for a malformed or unsupported file with
// *detail naming the byte offset and what was expected there; kUnavailable when src could not
// supply bytes it asked for; kTooLarge when a table exceeds options.max_table_floats.
Status read_model(const ByteSource& src, ModelInfo* out, std::string* detail = nullptr,
                  const ReadOptions& options = {}) noexcept;

// The same, for one known format.
Status read_gguf(const ByteSource& src, ModelInfo* out, std::string* detail = nullptr,
                 const ReadOptions& options = {}) noexcept;
Status read_safetensors(const ByteSource& src, ModelInfo* out, std::string* detail = nullptr,
                        const ReadOptions& options = {}) noexcept;
Status read_npy(const ByteSource& src, ModelInfo* out, std::string* detail = nullptr,
                const ReadOptions& options = {}) noexcept;
// config.json text: RoPE as rope_params_from_config reads it, or a learned table's shape (GPT-2,
// BERT, ...), ALiBi (BLOOM, MPT, Falcon) or T5 settings. Refuses a config whose scheme it cannot tell.
Status model_info_from_config(std::string_view json_text, ModelInfo* out, std::string* detail = nullptr) noexcept;

// A ByteSource over bytes in memory (data must outlive the source).
ByteSource memory_source(const std::uint8_t* data, std::size_t size) noexcept;

}  // namespace posenc
