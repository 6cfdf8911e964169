// posenc: the ONNX operators Attention-23/24 and RotaryEmbedding-23 with their exact semantics,
// on float32 tensors and, through the *_f16 forms, float16 ones (computed in float32, outputs
// rounded to float16). Tensors are read in place through TensorRef views; softmax stays finite at
// ±1e4 logits. Implemented in cpp/src/onnx.cpp and onnx_float16.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "posenc/status.hpp"

namespace posenc {

enum class DType : int { kFloat32 = 0, kBool = 1, kInt64 = 2, kFloat16 = 3 };  // kFloat16: IEEE half bits (uint16)

// A read-only view of a row-major tensor of rank <= 4. data == nullptr means "absent" (an omitted
// optional ONNX input). bool tensors are one byte per element (0 = false).
struct TensorRef {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  int rank = 0;
  std::int64_t dims[4] = {0, 0, 0, 0};

  bool present() const noexcept { return data != nullptr; }
  std::int64_t size() const noexcept;  // product of dims (1 for rank 0)
};

// ---- ONNX RotaryEmbedding-23 ----------------------------------------------------------------------

struct RotaryEmbeddingAttrs {
  int interleaved = 0;                    // 1: pairs (2k, 2k+1); 0: (k, k + rd/2)
  std::int64_t rotary_embedding_dim = 0;  // 0: head_size
  std::int64_t num_heads = 0;             // required for 3D input
};

// X [B, H, S, D] or [B, S, H*D]; cos/sin caches [max_pos, rd/2] with position_ids [B, S] (int64),
// or [B, S, rd/2] without. Writes y (X's shape). Dims >= rd are copied through.
// Status: kBadShape / kBadArgument naming the slot or attribute that is wrong.
// The checks of onnx_rotary_embedding alone (shapes, attributes, position ids in range): lets a
// caller validate a whole tensor once, then rotate it in pieces.
Status onnx_rotary_embedding_check(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                   const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs) noexcept;
Status onnx_rotary_embedding(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                             const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs, float* y) noexcept;
// The same on float16 X and caches (y: float16 bits): widened to float32 exactly, rotated in
// float32, rounded back to nearest (ties to even).
Status onnx_rotary_embedding_f16(const TensorRef& x, const TensorRef& cos_cache, const TensorRef& sin_cache,
                                 const TensorRef& position_ids, const RotaryEmbeddingAttrs& attrs,
                                 std::uint16_t* y) noexcept;

// ---- ONNX Attention-23/24 -------------------------------------------------------------------------

struct AttentionAttrs {
  int is_causal = 0;
  std::optional<double> scale;   // default 1/sqrt(head_size)
  std::int64_t q_num_heads = 0;  // required for 3D input
  std::int64_t kv_num_heads = 0;
  double softcap = 0.0;           // <= 0: off
  int qk_matmul_output_mode = 0;  // 0 raw, 1 softcapped, 2 + bias (mask, causal), 3 softmax
  int softmax_precision = 0;      // 0 (unset) or 1 (FLOAT); others are refused: float32 only
  int opset = 24;                 // 23 refuses nonpad_kv_seqlen
};

struct AttentionInputs {
  TensorRef q, k, v;               // float32 (or all float16), 3D or 4D (all the same rank)
  TensorRef attn_mask;             // float32, float16 or bool; broadcasts to [B, Hq, Sq, T]
  TensorRef past_key, past_value;  // Q's type, [B, Hkv, P, D] / [B, Hkv, P, Dv]
  TensorRef nonpad_kv_seqlen;      // int64 [B], opset 24
  // Q may be a piece of the queries: their rows [q_row0, q_row0 + Q's q_len) out of q_len_total
  // (0: Q is all of them). The mask's broadcast, its rows and the causal limits are then those of
  // the whole sequence of queries; Y and qk_matmul_output are the piece's rows. Pieces that start
  // at a multiple of 64 rows and hold a multiple of 64 (or run to the end) give exactly the rows of
  // one call on all of Q (the kernels' 64-row query blocks); other pieces differ by rounding only.
  std::int64_t q_row0 = 0;
  std::int64_t q_len_total = 0;
};

// Shapes of the outputs an ONNX Attention node with these inputs produces.
struct AttentionShapes {
  int y_rank = 4;
  std::int64_t y[4] = {0, 0, 0, 0};                 // [B, Hq, Sq, Dv] or [B, Sq, Hq*Dv]
  std::int64_t present_key[4] = {0, 0, 0, 0};       // [B, Hkv, T, D]
  std::int64_t present_value[4] = {0, 0, 0, 0};     // [B, Hkv, T, Dv]
  std::int64_t qk_matmul_output[4] = {0, 0, 0, 0};  // [B, Hq, Sq, T]
};

// The attributes' rules that need no tensor (qk_matmul_output_mode 0-3, softmax_precision 0 or 1,
// scale and softcap finite, is_causal 0 or 1), which onnx_attention_shapes and onnx_attention state
// after the inputs' shapes and the JS layer asks before it allocates. Status: kBadArgument.
Status onnx_attention_attrs_check(const AttentionAttrs& attrs) noexcept;

// Checks every input and attribute and reports the output shapes. Status names the slot or
// attribute: "attn_mask does not broadcast to [B, q_num_heads, q_len, total kv length]", ...
Status onnx_attention_shapes(const AttentionInputs& in, const AttentionAttrs& attrs, AttentionShapes* shapes) noexcept;

// Runs the node. Each output pointer may be null (not requested); y must not be. Memory beyond
// the outputs is O(T·(D + Dv)) per thread (set_num_threads): scores are streamed over key blocks
// (online softmax) unless qk_matmul_output is requested, and causal rows skip the keys they
// cannot see.
Status onnx_attention(const AttentionInputs& in, const AttentionAttrs& attrs, float* y, float* present_key,
                      float* present_value, float* qk_matmul_output) noexcept;

// The same on float16 Q, K, V (and past; any mask): widened to float32 exactly,
// computed in float32, and every output rounded to float16 (to nearest, ties to even), the type
// ONNX gives the outputs. onnx_attention itself refuses float16 inputs.
Status onnx_attention_f16(const AttentionInputs& in, const AttentionAttrs& attrs, std::uint16_t* y,
                          std::uint16_t* present_key, std::uint16_t* present_value,
                          std::uint16_t* qk_matmul_output) noexcept;

}  // namespace posenc
