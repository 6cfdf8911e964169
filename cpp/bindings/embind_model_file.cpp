// readModel's adapter (js/model_file.js): the file's bytes arrive as heap chunks, and the result
// leaves in the public ModelInfo shape (posenc.d.ts).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/posenc.hpp"

namespace {

using emscripten::val;
using posenc_js::flat_params;
using posenc_js::at;
using posenc_js::Ptr;
using posenc_js::message;

// Model files. The JS layer holds the file's bytes read so far as heap chunks [offset, ptr, length];
// a read outside them fails and is recorded, so JS can fetch that range (asynchronously) and retry.
struct Chunks {
  std::vector<std::array<double, 3>> chunks;
  double need_offset = 0, need_length = 0;
};

bool read_chunks(void* user, std::uint64_t offset, std::size_t n, std::uint8_t* dst) {
  auto* c = static_cast<Chunks*>(user);
  std::uint64_t at_ = offset, end = offset + n;
  while (at_ < end) {
    bool found = false;
    for (const auto& ch : c->chunks) {
      const auto lo = static_cast<std::uint64_t>(ch[0]), len = static_cast<std::uint64_t>(ch[2]);
      if (at_ >= lo && at_ < lo + len) {
        const std::uint64_t take = std::min(end, lo + len) - at_;
        std::memcpy(dst + (at_ - offset), at<std::uint8_t>(static_cast<Ptr>(ch[1])) + (at_ - lo), take);
        at_ += take;
        found = true;
        break;
      }
    }
    if (!found) {
      c->need_offset = static_cast<double>(at_);
      c->need_length = static_cast<double>(end - at_);
      return false;
    }
  }
  return true;
}

// The public shape of readModel's result (posenc.d.ts, ModelInfo): a field only when the file says
// it; RoPE params flat, as flat_params() writes them (js/model_file.js gives them their public form).
val model_info(const posenc::ModelInfo& m) {
  val o = val::object();
  o.set("format", std::string(posenc::model_format_name(m.format)));
  o.set("architecture", m.architecture);
  if (m.n_heads) o.set("nHeads", m.n_heads);
  if (m.n_kv_heads) o.set("nKvHeads", m.n_kv_heads);
  if (m.context_length) o.set("contextLength", m.context_length);
  if (m.d_model) o.set("dModel", m.d_model);
  if (m.rope) o.set("rope", flat_params(*m.rope));
  if (m.sliding_window || m.rope_sliding) {
    val sliding = val::object();
    if (m.sliding_window) sliding.set("window", m.sliding_window);
    if (m.rope_sliding) sliding.set("params", flat_params(*m.rope_sliding));
    o.set("sliding", sliding);
  }
  for (const posenc_js::SchemePart& part : posenc_js::scheme_parts())
    if (part.model_info) part.model_info(m, o);
  if (m.position_table) {
    val t = val::object();
    t.set("name", m.position_table->name);
    t.set("maxLen", m.position_table->max_len);
    t.set("dModel", m.position_table->d_model);
    t.set("weights",
          m.position_table->weights.empty() ? val::null() : posenc_js::float_array(m.position_table->weights));
    o.set("positionTable", t);
  }
  if (m.irope) {
    val r = val::object();
    r.set("chunkSize", m.irope->chunk_size);
    r.set("floorScale", m.irope->floor_scale);
    r.set("attnScale", m.irope->attn_scale);
    r.set("temperatureTuning", m.irope->temperature_tuning);
    val layers = val::array();
    for (bool b : m.irope->rope_layers) layers.call<void>("push", b);
    r.set("ropeLayers", layers);
    o.set("irope", r);
  }
  val tensors = val::array();
  for (const auto& t : m.tensors) {
    val e = val::object();
    e.set("name", t.name);
    e.set("dtype", t.dtype);
    val shape = val::array();
    for (auto d : t.shape) shape.call<void>("push", static_cast<double>(d));
    e.set("shape", shape);
    tensors.call<void>("push", e);
  }
  o.set("tensors", tensors);
  val warnings = val::array();
  for (const auto& w : m.warnings) warnings.call<void>("push", w);
  o.set("warnings", warnings);
  return o;
}

// Returns [message, detail, info | null, need_offset, need_length] (need_length > 0: supply those bytes).
val read_model(const val& chunks, double size, const std::string& table_name, double max_table_floats) {
  Chunks c;
  const auto n = chunks["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i)
    c.chunks.push_back({chunks[i][0].as<double>(), chunks[i][1].as<double>(), chunks[i][2].as<double>()});
  posenc::ModelInfo info;
  std::string detail;
  posenc::ReadOptions options;
  options.table_name = table_name;
  options.max_table_floats = static_cast<std::size_t>(max_table_floats);
  const posenc::ByteSource src{static_cast<std::uint64_t>(size), &c, &read_chunks};
  const auto s = posenc::read_model(src, &info, &detail, options);
  val result = val::array();
  const bool need = s.code == posenc::StatusCode::kUnavailable && c.need_length > 0;
  result.call<void>("push", message(s), detail, s.ok() ? model_info(info) : val::null(), need ? c.need_offset : 0.0,
                    need ? c.need_length : 0.0);
  return result;
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_model_file) {
  using emscripten::function;
  function("readModel", &read_model);
}
