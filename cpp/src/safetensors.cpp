// safetensors (Hugging Face weights): u64 header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data, offsets relative to byte 8 + N. Only the header and the position tensors are
// read: a learned table (wpe.weight, *.position_embeddings.weight, ...) and T5's
// relative_attention_bias of the first encoder (else decoder) layer.
#include <nlohmann/json.hpp>

#include "config_json.hpp"
#include "file_bytes.hpp"
#include "posenc/model_file.hpp"

namespace posenc {
namespace {

using nlohmann::json;

// Position-table names, most specific first; a name matches if it ends with one of them.
constexpr const char* kTableSuffixes[] = {
    "wpe.weight",
    "position_embeddings.weight",
    "embed_positions.weight",
    "position_embedding.weight",
    "pos_emb.weight",
    "pos_emb",
    "pos_embed",
    "position_embd.weight",
};

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct Entry {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // absolute
};

bool float_dtype(const std::string& d, file::Dtype* out, std::uint64_t* width) {
  if (d == "F32") {
    *out = file::Dtype::kF32;
    *width = 4;
    return true;
  }
  if (d == "F16") {
    *out = file::Dtype::kF16;
    *width = 2;
    return true;
  }
  if (d == "BF16") {
    *out = file::Dtype::kBF16;
    *width = 2;
    return true;
  }
  if (d == "F64") {
    *out = file::Dtype::kF64;
    *width = 8;
    return true;
  }
  return false;
}

Status safetensors_fail(std::string* detail, const std::string& why) {
  if (detail != nullptr) *detail = "safetensors: " + why;
  return {StatusCode::kBadArgument, "model file: malformed or unsupported"};
}

// Reads a 2-D float tensor as float32, checking its byte extent against its shape.
Status read_table(const ByteSource& src, const Entry& e, std::size_t max_floats, std::vector<float>* out,
                  std::string* detail) {
  file::Dtype dtype;
  std::uint64_t width;
  if (!float_dtype(e.dtype, &dtype, &width))
    return safetensors_fail(detail,
                            "tensor " + e.name + " has dtype " + e.dtype + "; posenc reads F32, F16, BF16 and F64");
  if (e.shape.size() != 2) return safetensors_fail(detail, "tensor " + e.name + " is not 2-D");
  const std::uint64_t rows = e.shape[0], cols = e.shape[1];
  if (rows == 0 || cols == 0) return safetensors_fail(detail, "tensor " + e.name + " has a zero dimension");
  if (cols != 0 && rows > max_floats / cols) {
    if (detail != nullptr)
      *detail = "safetensors: tensor " + e.name + " holds more than " + std::to_string(max_floats) + " values";
    return {StatusCode::kTooLarge, "model file: a table is too large"};
  }
  if (rows * cols * width != e.end - e.begin)
    return safetensors_fail(detail, "tensor " + e.name + ": shape [" + std::to_string(rows) + ", " +
                                        std::to_string(cols) + "] of " + e.dtype + " needs " +
                                        std::to_string(rows * cols * width) + " bytes, data_offsets span " +
                                        std::to_string(e.end - e.begin));
  file::Failure failure;
  if (!file::read_floats(src, e.begin, rows * cols, dtype, out, &failure, "safetensors"))
    return file::status_of(failure, detail);
  return Status::Ok();
}

// One tensor's header entry {"dtype", "shape", "data_offsets"}, its extent checked against the file.
Status parse_entry(const std::string& name, const json& t, std::uint64_t data_start, std::uint64_t file_size,
                   Entry* out, std::string* detail) {
  Entry& e = *out;
  e.name = name;
  const auto dtype = t.find("dtype"), shape = t.find("shape"), offsets = t.find("data_offsets");
  if (!t.is_object() || dtype == t.end() || !dtype->is_string() || shape == t.end() || !shape->is_array() ||
      offsets == t.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return safetensors_fail(
        detail,
        "tensor " + e.name + ": expected {\"dtype\": string, \"shape\": [...], \"data_offsets\": [begin, end]}");
  e.dtype = *dtype;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned())
      return safetensors_fail(detail, "tensor " + e.name + ": shape entries must be whole numbers >= 0");
    e.shape.push_back(d.get<std::uint64_t>());
  }
  const std::uint64_t b = (*offsets)[0], en = (*offsets)[1];
  if (b > en)
    return safetensors_fail(detail, "tensor " + e.name + ": data_offsets [" + std::to_string(b) + ", " +
                                        std::to_string(en) + "] must not end before they begin");
  if (en > file_size - data_start)
    return safetensors_fail(detail, "the file is truncated: tensor " + e.name + "'s data_offsets [" +
                                        std::to_string(b) + ", " + std::to_string(en) + "] need " +
                                        std::to_string(data_start + en) + " bytes, the file has " +
                                        std::to_string(file_size));
  e.begin = data_start + b;
  e.end = data_start + en;
  return Status::Ok();
}

}  // namespace

Status read_safetensors(const ByteSource& src, ModelInfo* out, std::string* detail,
                        const ReadOptions& options) noexcept {
  if (out == nullptr || src.read == nullptr) return {StatusCode::kBadArgument, "out and src.read must not be null"};
  try {
    file::Cursor c(src, "safetensors");
    std::uint64_t n = 0;
    if (!c.value(&n, "the header length")) return file::status_of(c.failure(), detail);
    if (n > c.remaining())
      return safetensors_fail(detail, "the file is truncated: its header length (byte 0) says " + std::to_string(n) +
                                          " bytes of JSON from byte 8, but the file ends " +
                                          std::to_string(c.remaining()) + " bytes later, at byte " +
                                          std::to_string(src.size));
    if (n > (std::uint64_t{32} << 20))  // the format allows 100 MB; real headers are a few MB at most
      return safetensors_fail(detail, "at byte 0: a header of " + std::to_string(n) +
                                          " bytes is larger than the 32 MiB this reader accepts");
    std::string header;
    if (!c.string(n, &header, "the JSON header")) return file::status_of(c.failure(), detail);
    if (!config_json::nesting_ok(header, 16))
      return safetensors_fail(detail, "at byte 8: the header nests deeper than 16 levels");
    const json root = json::parse(header, nullptr, false);
    if (root.is_discarded() || !root.is_object())
      return safetensors_fail(detail, "at byte 8: the header is not a JSON object");
    const std::uint64_t data_start = 8 + n;

    ModelInfo info;
    info.format = ModelFormat::kSafetensors;
    std::vector<Entry> entries;
    for (const auto& item : root.items()) {
      if (item.key() == "__metadata__") continue;
      Entry e;
      if (Status s = parse_entry(item.key(), item.value(), data_start, src.size, &e, detail); !s.ok()) return s;
      info.tensors.push_back({e.name, e.dtype, e.shape});
      entries.push_back(std::move(e));
    }

    // The learned table: the one asked for, else the best-named 2-D tensor.
    const Entry* table = nullptr;
    if (!options.table_name.empty()) {
      for (const auto& e : entries)
        if (e.name == options.table_name) table = &e;
      if (table == nullptr) return safetensors_fail(detail, "no tensor named " + options.table_name);
    } else {
      for (const char* suffix : kTableSuffixes) {
        for (const auto& e : entries)
          if (e.shape.size() == 2 && ends_with(e.name, suffix)) {
            table = &e;
            break;
          }
        if (table != nullptr) break;
      }
    }
    if (table != nullptr) {
      PositionTable t{table->name,
                      static_cast<std::size_t>(table->shape.size() == 2 ? table->shape[0] : 0),
                      static_cast<std::size_t>(table->shape.size() == 2 ? table->shape[1] : 0),
                      {}};
      if (Status s = read_table(src, *table, options.max_table_floats, &t.weights, detail); !s.ok()) return s;
      if (ends_with(table->name, "embed_positions.weight"))
        info.warnings.push_back(table->name + ": OPT-style tables keep 2 extra rows (position p is row p + 2)");
      info.position_table = std::move(t);
    }

    // T5's bias table [num_buckets][n_heads], shared by the layers of a stack (block 0 holds it).
    for (const char* name : {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                             "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"}) {
      const Entry* e = nullptr;
      for (const auto& x : entries)
        if (x.name == name) e = &x;
      if (e == nullptr) continue;
      T5Info t5;
      t5.name = name;
      t5.bidirectional = name[0] == 'e';
      if (e->shape.size() == 2 && e->shape[0] > (1u << 20))
        return safetensors_fail(detail, "tensor " + std::string(name) + " has more than 2^20 buckets");
      if (Status s = read_table(src, *e, options.max_table_floats, &t5.table, detail); !s.ok()) return s;
      t5.num_buckets = static_cast<int>(e->shape[0]);
      t5.n_heads = static_cast<std::size_t>(e->shape[1]);
      info.warnings.push_back(
          "T5's max distance is not in the weights: assumed 128 (relative_attention_max_distance in config.json)");
      info.t5 = std::move(t5);
      break;
    }
    if (!info.position_table && !info.t5)
      info.warnings.push_back(
          "no position tensor (wpe.weight, *.position_embeddings.weight, *.relative_attention_bias.weight, ...): "
          "RoPE and ALiBi models keep their positions in config.json, not in the weights");
    *out = std::move(info);
    return Status::Ok();
  } catch (...) {  // std::bad_alloc
    return {StatusCode::kTooLarge, "model file: out of memory"};
  }
}

}  // namespace posenc
