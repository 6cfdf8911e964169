// The ONNX backend test vectors for RotaryEmbedding-23 and Attention-23/24 (shared/conformance),
// run through the C++ API at the ONNX tolerance |actual - expected| <= 1e-7 + 1e-3 |expected|.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "posenc/posenc.hpp"
#include "subsets.hpp"

namespace {

using nlohmann::json;

// The bits of a value that is exactly a float16 (the vectors store halves exactly), and back.
std::uint16_t exact_half_bits(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (std::isinf(v)) return sign | 0x7c00;
  if (v == 0) return sign;
  int e;
  std::frexp(v, &e);                                                             // v = m 2^e, m in [0.5, 1)
  if (e - 1 < -14) return sign | static_cast<std::uint16_t>(std::ldexp(v, 24));  // subnormal: v / 2^-24
  return sign | static_cast<std::uint16_t>((e - 1 + 15) << 10) |
         static_cast<std::uint16_t>(std::ldexp(v, 11 - e) - 1024);
}
float half_value(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double mag = exp == 0    ? std::ldexp(mant, -24)
                     : exp == 31 ? (mant ? NAN : INFINITY)
                                 : std::ldexp(mant + 1024, exp - 25);
  return static_cast<float>((h & 0x8000) ? -mag : mag);
}

struct Tensor {
  bool present = false;
  std::string dtype;
  std::vector<std::int64_t> dims;
  std::vector<float> f;
  std::vector<std::uint16_t> h;  // float16 bits
  std::vector<std::uint8_t> b;
  std::vector<std::int64_t> i;

  posenc::TensorRef ref() const {
    posenc::TensorRef r;
    if (!present) return r;
    r.rank = static_cast<int>(dims.size());
    std::copy(dims.begin(), dims.end(), r.dims);
    if (dtype == "bool") {
      r.dtype = posenc::DType::kBool;
      r.data = b.data();
    } else if (dtype == "int64") {
      r.dtype = posenc::DType::kInt64;
      r.data = i.data();
    } else if (dtype == "float16") {
      r.dtype = posenc::DType::kFloat16;
      r.data = h.data();
    } else {
      r.dtype = posenc::DType::kFloat32;
      r.data = f.data();
    }
    return r;
  }
  std::size_t size() const {
    std::size_t n = 1;
    for (auto d : dims) n *= static_cast<std::size_t>(d);
    return n;
  }
};

double value(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  return v.get<double>();
}

std::map<std::string, Tensor> tensors(const json& list) {
  std::map<std::string, Tensor> out;
  for (const auto& t : list) {
    Tensor x;
    x.present = t["present"].get<bool>();
    if (x.present) {
      x.dtype = t["dtype"].get<std::string>();
      x.dims = t["dims"].get<std::vector<std::int64_t>>();
      for (const auto& v : t["data"]) {
        if (x.dtype == "bool") x.b.push_back(v.get<bool>() ? 1 : 0);
        else if (x.dtype == "int64") x.i.push_back(v.get<std::int64_t>());
        else x.f.push_back(static_cast<float>(value(v)));
        if (x.dtype == "float16") x.h.push_back(exact_half_bits(value(v)));
      }
    }
    out[t["slot"].get<std::string>()] = x;
  }
  return out;
}

// Worst |actual - expected| / (atol + rtol |expected|); > 1 fails. -inf must match -inf.
double worst_ratio(const std::vector<float>& got, const Tensor& want, double rtol, double atol) {
  double worst = 0.0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const double e = want.f[k], a = got[k];
    if (std::isinf(e) || std::isinf(a)) {
      if (a != e) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isnan(a)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(a - e) / (atol + rtol * std::fabs(e)));
  }
  return worst;
}

}  // namespace

TEST_CASE("conformance: every shared ONNX RotaryEmbedding / Attention vector within the ONNX tolerance" *
          doctest::skip(!posenc::test::conformance_available()) * kKernels) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(posenc::test::conformance_dir() + "/onnx"))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 80);
  int passed = 0, fp16_cases = 0;
  double worst_seen = 0.0;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const json c = json::parse(text.str());
    const std::string name = c["name"].get<std::string>();
    CAPTURE(name);
    auto ins = tensors(c["inputs"]);
    const auto outs = tensors(c["outputs"]);
    bool fp16 = false;
    for (const auto& input : ins) fp16 |= input.second.present && input.second.dtype == "float16";
    if (fp16) ++fp16_cases;
    // float16 outputs come back as bits; they are compared as the float values they hold.
    auto halves = [](const std::vector<std::uint16_t>& bits) {
      std::vector<float> v(bits.size());
      for (std::size_t k = 0; k < bits.size(); ++k) v[k] = half_value(bits[k]);
      return v;
    };
    const double rtol = c["tolerance"]["rtol"].get<double>(), atol = c["tolerance"]["atol"].get<double>();
    const json& attrs = c["attributes"];
    auto attr_i = [&](const char* k, std::int64_t d) { return attrs.contains(k) ? attrs[k].get<std::int64_t>() : d; };
    std::map<std::string, std::vector<float>> got;
    if (c["op"] == "RotaryEmbedding") {
      posenc::RotaryEmbeddingAttrs a;
      a.interleaved = static_cast<int>(attr_i("interleaved", 0));
      a.rotary_embedding_dim = attr_i("rotary_embedding_dim", 0);
      a.num_heads = attr_i("num_heads", 0);
      std::vector<float> y(ins["X"].size());
      std::vector<std::uint16_t> yh(fp16 ? y.size() : 0);
      const auto s =
          fp16 ? posenc::onnx_rotary_embedding_f16(ins["X"].ref(), ins["cos_cache"].ref(), ins["sin_cache"].ref(),
                                                   ins["position_ids"].ref(), a, yh.data())
               : posenc::onnx_rotary_embedding(ins["X"].ref(), ins["cos_cache"].ref(), ins["sin_cache"].ref(),
                                               ins["position_ids"].ref(), a, y.data());
      INFO(s.message);
      REQUIRE(s.ok());
      got["Y"] = fp16 ? halves(yh) : y;
    } else {
      posenc::AttentionAttrs a;
      a.opset = c["opset"].get<int>();
      a.is_causal = static_cast<int>(attr_i("is_causal", 0));
      a.q_num_heads = attr_i("q_num_heads", 0);
      a.kv_num_heads = attr_i("kv_num_heads", 0);
      a.qk_matmul_output_mode = static_cast<int>(attr_i("qk_matmul_output_mode", 0));
      a.softmax_precision = static_cast<int>(attr_i("softmax_precision", 0));
      if (attrs.contains("scale")) a.scale = attrs["scale"].get<double>();
      if (attrs.contains("softcap")) a.softcap = attrs["softcap"].get<double>();
      posenc::AttentionInputs in{ins["Q"].ref(),
                                 ins["K"].ref(),
                                 ins["V"].ref(),
                                 ins["attn_mask"].ref(),
                                 ins["past_key"].ref(),
                                 ins["past_value"].ref(),
                                 ins["nonpad_kv_seqlen"].ref()};
      posenc::AttentionShapes shapes;
      const auto ss = posenc::onnx_attention_shapes(in, a, &shapes);
      INFO(ss.message);
      REQUIRE(ss.ok());
      for (const char* slot : {"Y", "present_key", "present_value", "qk_matmul_output"})
        if (outs.at(slot).present) got[slot].assign(outs.at(slot).size(), std::nanf(""));
      auto ptr = [&](const char* slot) { return got.count(slot) ? got[slot].data() : nullptr; };
      std::map<std::string, std::vector<std::uint16_t>> got_h;
      for (const auto& g : got) got_h[g.first].resize(g.second.size());
      auto hptr = [&](const char* slot) { return got_h.count(slot) ? got_h[slot].data() : nullptr; };
      const auto s = fp16 ? posenc::onnx_attention_f16(in, a, hptr("Y"), hptr("present_key"), hptr("present_value"),
                                                       hptr("qk_matmul_output"))
                          : posenc::onnx_attention(in, a, ptr("Y"), ptr("present_key"), ptr("present_value"),
                                                   ptr("qk_matmul_output"));
      INFO(s.message);
      REQUIRE(s.ok());
      if (fp16)
        for (auto& g : got) g.second = halves(got_h[g.first]);
      // The shapes the API reports are the expected outputs' shapes.
      const auto& y = outs.at("Y").dims;
      CHECK(std::vector<std::int64_t>(shapes.y, shapes.y + shapes.y_rank) == y);
    }
    for (const auto& output : got) {
      const std::string& slot = output.first;
      CAPTURE(slot);
      const double r = worst_ratio(output.second, outs.at(slot), rtol, atol);
      worst_seen = std::max(worst_seen, r);
      CHECK(r <= 1.0);
    }
    ++passed;
  }
  MESSAGE("conformance: ", passed, " ONNX cases run (", fp16_cases, " of them float16), worst error ", worst_seen,
          " of the allowed tolerance");
  CHECK(static_cast<std::size_t>(passed) == files.size());
}

TEST_CASE("onnx attention: onnx_attention_attrs_check is the attributes' rule onnx_attention_shapes states") {
  // The JS layer asks the check before it allocates: its message must be the operator's own.
  const std::vector<float> t(1 * 1 * 2 * 4, 0.5f);
  posenc::TensorRef ref{t.data(), posenc::DType::kFloat32, 4, {1, 1, 2, 4}};
  posenc::AttentionInputs in{ref, ref, ref};
  posenc::AttentionShapes shapes;
  CHECK(posenc::onnx_attention_attrs_check({}).ok());
  std::vector<posenc::AttentionAttrs> bad(5);
  bad[0].qk_matmul_output_mode = 4;
  bad[1].softmax_precision = 16;
  bad[2].scale = NAN;
  bad[3].softcap = INFINITY;
  bad[4].is_causal = 2;
  const char* messages[] = {"qk_matmul_output_mode must be 0, 1, 2 or 3",
                            "softmax_precision must be FLOAT (1): posenc computes in float32", "scale must be finite",
                            "softcap must be finite", "is_causal must be 0 or 1"};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const posenc::Status s = posenc::onnx_attention_attrs_check(bad[i]);
    CHECK(s.code == posenc::StatusCode::kBadArgument);
    CHECK(std::string(s.message) == messages[i]);
    CHECK(std::string(posenc::onnx_attention_shapes(in, bad[i], &shapes).message) == s.message);
  }
}
