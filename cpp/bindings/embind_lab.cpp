// Embind adapters for the extrapolation lab (js/lab.js is the JS API over them). Models
// and datasets travel as heap addresses of objects made here and freed by labModelDelete /
// labDatasetDelete; tensors as heap addresses (the JS layer copies in and out). Every call returns
// the C++ status message ("" for success) first; no C++ exception crosses into JS.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "embind_options.hpp"
#include "embind_status.hpp"
#include "posenc/lab.hpp"

namespace {

using emscripten::val;
using posenc_js::at;
using posenc_js::Ptr;
namespace lab = posenc::lab;
using posenc_js::message;

val pair(const posenc::Status& s, double v) {
  val r = val::array();
  r.call<void>("push", message(s), v);
  return r;
}

// A fresh typed array (Float32Array / Float64Array) that JS owns.
template <class T>
val copy(const std::vector<T>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

// lab::PositionArray list as { name: { shape, values: Float32Array } }.
val position_object(const std::vector<lab::PositionArray>& arrays) {
  val out = val::object();
  for (const lab::PositionArray& p : arrays) {
    val a = val::object(), shape = val::array();
    for (std::size_t n : p.shape) shape.call<void>("push", static_cast<double>(n));
    a.set("shape", shape);
    a.set("values", copy(p.values));
    out.set(p.name, a);
  }
  return out;
}

// lab::ModelConfig from createModel's checked numbers.
posenc::Status model_config(double vocab_size, double d_model, double n_layers, double n_heads, double train_len,
                            double max_positions, const std::string& scheme, lab::ModelConfig* c) {
  c->vocab_size = static_cast<std::size_t>(vocab_size);
  c->d_model = static_cast<std::size_t>(d_model);
  c->n_layers = static_cast<std::size_t>(n_layers);
  c->n_heads = static_cast<std::size_t>(n_heads);
  c->train_len = static_cast<std::size_t>(train_len);
  c->max_positions = static_cast<std::size_t>(max_positions);
  return lab::parse_scheme(scheme.c_str(), &c->scheme);
}

// Returns [message, parameter floats, activation floats] (lab::footprint).
val footprint(double vocab_size, double d_model, double n_layers, double n_heads, double train_len,
              double max_positions, const std::string& scheme, double batch, double seq_len) {
  lab::ModelConfig c;
  lab::Footprint f;
  posenc::Status s = model_config(vocab_size, d_model, n_layers, n_heads, train_len, max_positions, scheme, &c);
  if (s.ok()) s = lab::footprint(c, static_cast<std::size_t>(batch), static_cast<std::size_t>(seq_len), &f);
  val r = val::array();
  r.call<void>("push", message(s), static_cast<double>(f.params), static_cast<double>(f.activations));
  return r;
}

// A call's rule of its rows (lab::shape_check), which the JS layer asks before it copies the tokens.
std::string shape_check(double batch, double seq_len) {
  return message(lab::shape_check(static_cast<std::size_t>(batch), static_cast<std::size_t>(seq_len)));
}

// Returns [message, model address] (address 0 on failure).
val model_create(double vocab_size, double d_model, double n_layers, double n_heads, double train_len,
                 double max_positions, const std::string& scheme, double seed) {
  lab::ModelConfig c;
  c.seed = static_cast<std::uint64_t>(seed);
  if (posenc::Status s = model_config(vocab_size, d_model, n_layers, n_heads, train_len, max_positions, scheme, &c);
      !s.ok())
    return pair(s, 0);
  std::unique_ptr<lab::Model> m;
  const posenc::Status s = lab::Model::create(c, &m);
  return pair(s, static_cast<double>(reinterpret_cast<Ptr>(m.release())));
}

void model_delete(Ptr m) { delete at<lab::Model>(m); }

// [{ name, shape, data, grad }] with heap addresses of the model's own buffers.
val model_tensors(Ptr p) {
  const lab::Model& m = *at<lab::Model>(p);
  val out = val::array();
  for (std::size_t i = 0; i < m.n_tensors(); ++i) {
    const lab::TensorView t = m.tensor(i);
    val o = val::object();
    o.set("name", std::string(t.name));
    val shape = val::array();
    if (t.rank == 2) shape.call<void>("push", t.rows);
    shape.call<void>("push", t.cols);
    o.set("shape", shape);
    o.set("data", static_cast<double>(reinterpret_cast<Ptr>(t.data)));
    o.set("grad", static_cast<double>(reinterpret_cast<Ptr>(t.grad)));
    out.call<void>("push", o);
  }
  return out;
}

double model_steps(Ptr m) { return static_cast<double>(at<lab::Model>(m)->steps_taken()); }

// Returns [message, { name: { shape, values } }].
val model_position(Ptr m) {
  std::vector<lab::PositionArray> arrays;
  const posenc::Status s = at<lab::Model>(m)->position_parameters(&arrays);
  val r = val::array();
  r.call<void>("push", message(s));
  r.call<void>("push", s.ok() ? position_object(arrays) : val::object());
  return r;
}

// positions: a heap address of [batch][seq_len] int32, or 0 for 0 … seq_len − 1.
val loss_and_gradients(Ptr m, Ptr tokens, double batch, double seq_len, Ptr positions) {
  float loss = 0.0f;
  const auto s = at<lab::Model>(m)->loss_and_gradients(at<const std::int32_t>(tokens), static_cast<std::size_t>(batch),
                                                       static_cast<std::size_t>(seq_len), &loss,
                                                       {at<const std::int32_t>(positions)});
  return pair(s, loss);
}

// train_step's rule of lr (lab::lr_check), which the JS layer asks before it copies the tokens.
std::string lr_check(double lr) { return message(lab::lr_check(lr)); }

val train_step(Ptr m, Ptr tokens, double batch, double seq_len, double lr, Ptr positions) {
  float loss = 0.0f;
  const auto s = at<lab::Model>(m)->train_step(at<const std::int32_t>(tokens), static_cast<std::size_t>(batch),
                                               static_cast<std::size_t>(seq_len), lr, &loss, nullptr,
                                               {at<const std::int32_t>(positions)});
  return pair(s, loss);
}

// scaling: one of lab::kRopeScalings by name (checked by the JS layer against labNames());
// position_loss: [seq_len - 1] float64.
val evaluate(Ptr m, Ptr tokens, double batch, double seq_len, const std::string& scaling, Ptr position_loss) {
  double loss = 0.0;
  lab::EvalOptions o;
  for (posenc::RopeScaling sc : lab::kRopeScalings)
    if (scaling == posenc::rope_scaling_name(sc)) o.rope_scaling = sc;
  const auto s = at<lab::Model>(m)->evaluate(at<const std::int32_t>(tokens), static_cast<std::size_t>(batch),
                                             static_cast<std::size_t>(seq_len), o, &loss, at<double>(position_loss));
  return pair(s, loss);
}

// lab::DatasetConfig from dataset()'s checked options (text: a heap address, 0 before it is copied).
posenc::Status dataset_config(const std::string& task, double vocab_size, double seed, double peak, Ptr text,
                              double text_len, lab::DatasetConfig* c) {
  c->vocab_size = static_cast<std::size_t>(vocab_size);
  c->seed = static_cast<std::uint64_t>(seed);
  c->peak = peak;
  c->text = at<const std::uint8_t>(text);
  c->text_len = static_cast<std::size_t>(text_len);
  return lab::parse_task(task.c_str(), &c->task);
}

// The dataset's rules that read no text (lab::Dataset::check), before the JS layer copies the text.
std::string dataset_check(const std::string& task, double vocab_size, double peak, double text_len) {
  lab::DatasetConfig c;
  posenc::Status s = dataset_config(task, vocab_size, 0, peak, 0, text_len, &c);
  return message(s.ok() ? lab::Dataset::check(c) : s);
}

val dataset_create(const std::string& task, double vocab_size, double seed, double peak, Ptr text, double text_len) {
  lab::DatasetConfig c;
  if (posenc::Status s = dataset_config(task, vocab_size, seed, peak, text, text_len, &c); !s.ok()) return pair(s, 0);
  std::unique_ptr<lab::Dataset> d;
  const posenc::Status s = lab::Dataset::create(c, &d);
  return pair(s, static_cast<double>(reinterpret_cast<Ptr>(d.release())));
}

void dataset_delete(Ptr d) { delete at<lab::Dataset>(d); }
double dataset_vocab_size(Ptr d) { return static_cast<double>(at<lab::Dataset>(d)->vocab_size()); }
double dataset_entropy_rate(Ptr d) { return at<lab::Dataset>(d)->entropy_rate(); }
double dataset_floor(Ptr d, double seq_len) {
  return at<lab::Dataset>(d)->loss_floor(static_cast<std::size_t>(seq_len));
}

// 64-bit seeds cross as two 32-bit halves: a JS number holds 53 bits.
std::uint64_t seed64(double hi, double lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | static_cast<std::uint64_t>(lo);
}

std::string dataset_sample(Ptr d, Ptr out, double batch, double seq_len, double seed_hi, double seed_lo) {
  return message(at<lab::Dataset>(d)->sample(at<std::int32_t>(out), static_cast<std::size_t>(batch),
                                             static_cast<std::size_t>(seq_len), seed64(seed_hi, seed_lo)));
}

// random_positions' rule (lab::random_positions_check), which the JS layer asks before it allocates.
std::string random_positions_check(double batch, double seq_len, double max_position) {
  return message(lab::random_positions_check(static_cast<std::size_t>(batch), static_cast<std::size_t>(seq_len),
                                             static_cast<std::size_t>(max_position)));
}

std::string random_positions(Ptr out, double batch, double seq_len, double max_position, double seed_hi,
                             double seed_lo) {
  return message(lab::random_positions(at<std::int32_t>(out), static_cast<std::size_t>(batch),
                                       static_cast<std::size_t>(seq_len), static_cast<std::size_t>(max_position),
                                       seed64(seed_hi, seed_lo)));
}

// lab::stream_seed as [hi, lo] halves.
val stream_seed(double seed_hi, double seed_lo, double index) {
  const std::uint64_t s = lab::stream_seed(seed64(seed_hi, seed_lo), static_cast<std::uint64_t>(index));
  val r = val::array();
  r.call<void>("push", static_cast<double>(s >> 32));
  r.call<void>("push", static_cast<double>(s & 0xFFFFFFFFu));
  return r;
}

// The RunConfig of run()'s checked config object (js/lab.js).
lab::RunConfig run_config(const val& c) {
  lab::RunConfig rc;
  rc.model.d_model = c["dModel"].as<std::size_t>();
  rc.model.n_layers = c["nLayers"].as<std::size_t>();
  rc.model.n_heads = c["nHeads"].as<std::size_t>();
  rc.model.train_len = c["trainLength"].as<std::size_t>();
  rc.model.seed = static_cast<std::uint64_t>(c["seed"].as<double>());
  rc.schedule.peak_lr = c["lr"].as<double>();
  rc.schedule.total_steps = c["steps"].as<std::size_t>();
  rc.schedule.warmup_steps = c["warmupSteps"].as<std::size_t>();
  rc.batch = c["batch"].as<std::size_t>();
  rc.eval_batch = c["evalBatch"].as<std::size_t>();
  rc.data_seed = static_cast<std::uint64_t>(c["seed"].as<double>());
  rc.random_positions = c["randomPositions"].as<std::size_t>();
  return rc;
}

// lab::ExtendConfig of extend()'s checked config object (config.factor, config.checkpoints).
lab::ExtendConfig extend_config(const val& c) {
  lab::ExtendConfig ex;
  ex.factor = c["factor"].as<std::size_t>();
  ex.checkpoints = emscripten::vecFromJSArray<std::size_t>(c["checkpoints"]);
  return ex;
}

// The rules of run()'s and extend()'s configs for a task (lab::run_check, lab::extend_check), which
// the JS layer asks before it makes the dataset.
std::string run_check(const std::string& task, const val& c) {
  lab::Task t;
  const posenc::Status s = lab::parse_task(task.c_str(), &t);
  return message(s.ok() ? lab::run_check(t, run_config(c)) : s);
}
std::string extend_check(const std::string& task, const val& c) {
  lab::Task t;
  const posenc::Status s = lab::parse_task(task.c_str(), &t);
  return message(s.ok() ? lab::extend_check(t, run_config(c), extend_config(c)) : s);
}

// lab::Progress over a JS function (or undefined) passed as user.
bool js_progress(void* user, std::size_t step, std::size_t total, float loss) {
  const val& f = *static_cast<const val*>(user);
  return f.isUndefined() || f(static_cast<double>(step), static_cast<double>(total), loss).as<bool>();
}

// Trains and evaluates one scheme (lab::run_scheme); progress(step, totalSteps, loss) is called every
// step and returns false to cancel. Returns [message, result object].
val run_scheme(Ptr d, const val& c, const std::string& scheme, const val& progress) {
  const lab::RunConfig rc = run_config(c);
  lab::Scheme sc;
  val r = val::array();
  if (posenc::Status s = lab::parse_scheme(scheme.c_str(), &sc); !s.ok()) return pair(s, 0);
  lab::SchemeResult res;
  const posenc::Status s =
      lab::run_scheme(*at<lab::Dataset>(d), rc, sc, &res, js_progress, const_cast<val*>(&progress));
  r.call<void>("push", message(s));
  if (!s.ok()) return r;
  val o = val::object();
  o.set("scheme", scheme);
  o.set("trainSeconds", res.train_seconds);
  o.set("trainLoss", copy(res.train_loss));
  o.set("clippedSteps", static_cast<double>(res.clipped_steps));
  o.set("position", position_object(res.position));
  val rows = val::array();
  for (const lab::EvalRow& e : res.eval) {
    val row = val::object();
    row.set("length", e.length);
    row.set("ropeScaling", std::string(posenc::rope_scaling_name(e.scaling)));
    row.set("noEmbedding", e.no_embedding);
    row.set("loss", e.no_embedding ? val::null() : val(e.loss));
    row.set("floor", e.floor);
    row.set("bucketWidth", e.bucket_width);
    row.set("bucketLoss", copy(e.bucket_loss));
    rows.call<void>("push", row);
  }
  o.set("eval", rows);
  r.call<void>("push", o);
  return r;
}

// Context extension (lab::run_extension) with config.factor and config.checkpoints; progress as
// run_scheme's. Returns [message, { trainLoss, tuneLoss: { scaling: Float32Array }, rows, seconds }].
val run_extension(Ptr d, const val& c, const std::string& scheme, const val& progress) {
  const lab::RunConfig rc = run_config(c);
  const lab::ExtendConfig ex = extend_config(c);
  lab::Scheme sc;
  if (posenc::Status s = lab::parse_scheme(scheme.c_str(), &sc); !s.ok()) return pair(s, 0);
  lab::ExtendResult res;
  const posenc::Status s =
      lab::run_extension(*at<lab::Dataset>(d), rc, sc, ex, &res, js_progress, const_cast<val*>(&progress));
  val r = val::array();
  r.call<void>("push", message(s));
  if (!s.ok()) return r;
  val o = val::object(), tune = val::object(), rows = val::array();
  o.set("trainLoss", copy(res.train_loss));
  for (std::size_t k = 0; k < std::size(lab::kExtendScalings); ++k)
    tune.set(posenc::rope_scaling_name(lab::kExtendScalings[k]), copy(res.tune_loss[k]));
  o.set("tuneLoss", tune);
  for (const lab::ExtendRow& e : res.rows) {
    val row = val::object();
    row.set("ropeScaling", std::string(posenc::rope_scaling_name(e.scaling)));
    row.set("steps", e.steps);
    row.set("length", e.length);
    row.set("loss", e.loss);
    rows.call<void>("push", row);
  }
  o.set("rows", rows);
  o.set("seconds", res.seconds);
  r.call<void>("push", o);
  return r;
}

// The lab's names in enum order: schemes, tasks, the RoPE scalings it evaluates.
val lab_names() {
  val out = val::object(), schemes = val::array(), tasks = val::array(), scalings = val::array();
  for (std::size_t k = 0; k < lab::kNumSchemes; ++k)
    schemes.call<void>("push", std::string(lab::scheme_name(static_cast<lab::Scheme>(k))));
  for (std::size_t k = 0; k < lab::kNumTasks; ++k)
    tasks.call<void>("push", std::string(lab::task_name(static_cast<lab::Task>(k))));
  for (posenc::RopeScaling sc : lab::kRopeScalings)
    scalings.call<void>("push", std::string(posenc::rope_scaling_name(sc)));
  out.set("schemes", schemes);
  out.set("tasks", tasks);
  out.set("ropeScalings", scalings);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_lab) {
  using emscripten::function;
  function("labNames", &lab_names);
  function("labFootprint", &footprint);
  function("labShapeCheck", &shape_check);
  function("labModelCreate", &model_create);
  function("labModelDelete", &model_delete);
  function("labModelTensors", &model_tensors);
  function("labModelSteps", &model_steps);
  function("labModelPosition", &model_position);
  function("labLossAndGradients", &loss_and_gradients);
  function("labLrCheck", &lr_check);
  function("labTrainStep", &train_step);
  function("labEvaluate", &evaluate);
  function("labDatasetCreate", &dataset_create);
  function("labDatasetCheck", &dataset_check);
  function("labDatasetDelete", &dataset_delete);
  function("labDatasetVocabSize", &dataset_vocab_size);
  function("labDatasetEntropyRate", &dataset_entropy_rate);
  function("labDatasetFloor", &dataset_floor);
  function("labDatasetSample", &dataset_sample);
  function("labStreamSeed", &stream_seed);
  function("labRandomPositionsCheck", &random_positions_check);
  function("labRandomPositions", &random_positions);
  function("labRunCheck", &run_check);
  function("labRunScheme", &run_scheme);
  function("labExtendCheck", &extend_check);
  function("labRunExtension", &run_extension);
}
