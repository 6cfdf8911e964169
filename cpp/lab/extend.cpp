// Context extension by fine-tuning, as Chen et al. 2023 (position interpolation) and Peng et al. 2023
// (YaRN) do it at scale: a rope or xpos model trained at T_train is fine-tuned at L = factor · T_train
// with each scaling of kExtendScalings and evaluated at L and 2·L along the way (lab.hpp,
// run_extension; docs/lab.md, "Context extension").
#include <algorithm>
#include <chrono>
#include <new>

#include "lab/run.hpp"
#include "posenc/lab.hpp"

namespace posenc::lab {
namespace {

// A model of the same config with the same weights and a fresh optimizer.
Status copy_of(const Model& base, std::unique_ptr<Model>* out) {
  if (Status s = Model::create(base.config(), out); !s.ok()) return s;
  for (std::size_t t = 0; t < base.n_tensors(); ++t) {
    const TensorView from = base.tensor(t), to = (*out)->tensor(t);
    std::copy_n(from.data, from.rows * from.cols, to.data);
  }
  return Status::Ok();
}

Status mean_loss(Model& model, const Dataset& data, const RunConfig& rc, std::size_t length, const EvalOptions& o,
                 double* loss) {
  std::vector<std::int32_t> tokens(rc.eval_batch * length);
  if (Status s = data.sample(tokens.data(), rc.eval_batch, length, stream_seed(rc.eval_seed, length)); !s.ok())
    return s;
  return model.evaluate(tokens.data(), rc.eval_batch, length, o, loss, nullptr);
}

}  // namespace

Status extend_check(Task task, const RunConfig& rc, const ExtendConfig& ex) noexcept {
  if (ex.factor < 2 || ex.factor > 64) return {StatusCode::kBadArgument, "factor must be in [2, 64]"};
  if (ex.checkpoints.empty()) return {StatusCode::kBadArgument, "checkpoints must not be empty"};
  if (!std::is_sorted(ex.checkpoints.begin(), ex.checkpoints.end()) ||
      std::adjacent_find(ex.checkpoints.begin(), ex.checkpoints.end()) != ex.checkpoints.end() ||
      ex.checkpoints.back() > 100000)
    return {StatusCode::kBadArgument, "checkpoints must be distinct, ascending and <= 100000"};
  if (Status s = detail::check_run(task, rc); !s.ok()) return s;
  if (rc.random_positions != 0) return {StatusCode::kBadArgument, "extend trains without random_positions"};
  if (rc.model.train_len > kMaxSeqLen / 2 / ex.factor)  // factor · train_len > 32768, without overflow
    return {StatusCode::kBadArgument, "factor · train_len must be <= 32768 (evaluated at twice that)"};
  return detail::check_run_rows(rc, 2 * ex.factor * rc.model.train_len);
}

Status run_extension(const Dataset& data, const RunConfig& rc, Scheme scheme, const ExtendConfig& ex, ExtendResult* out,
                     Progress progress, void* user) noexcept {
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  if (scheme != Scheme::kRope && scheme != Scheme::kXpos)
    return {StatusCode::kBadArgument, "extend needs the rope or xpos scheme"};
  if (Status s = extend_check(data.task(), rc, ex); !s.ok()) return s;
  const std::size_t T = rc.model.train_len, L = ex.factor * T, tune_steps = ex.checkpoints.back();
  const std::size_t n_scalings = std::size(kExtendScalings);
  try {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t total = rc.schedule.total_steps + n_scalings * tune_steps;
    std::unique_ptr<Model> base;
    detail::Trained trained;
    if (Status s = detail::train(data, rc, scheme, &base, &trained, {progress, user, 0, total}); !s.ok()) return s;
    out->scheme = scheme;
    out->train_loss = std::move(trained.train_loss);
    out->tune_loss.assign(n_scalings, {});
    out->rows.clear();

    const std::size_t batch = std::max<std::size_t>(1, rc.batch / ex.factor);
    const double lr = rc.schedule.peak_lr * rc.schedule.final_fraction;
    std::vector<std::int32_t> tokens(batch * L);
    for (std::size_t k = 0; k < n_scalings; ++k) {
      const RopeScaling scaling = kExtendScalings[k];
      const double factor = static_cast<double>(ex.factor);
      std::unique_ptr<Model> m;
      if (Status s = copy_of(*base, &m); !s.ok()) return s;
      const detail::ProgressSink sink{progress, user, rc.schedule.total_steps + k * tune_steps, total};
      std::size_t next = 0;  // the next checkpoint
      for (std::size_t step = 0;; ++step) {
        if (next < ex.checkpoints.size() && ex.checkpoints[next] == step) {
          for (std::size_t length : {L, 2 * L}) {
            ExtendRow row{scaling, step, length, 0.0};
            if (Status s = mean_loss(*m, data, rc, length, {scaling, factor}, &row.loss); !s.ok()) return s;
            out->rows.push_back(row);
          }
          ++next;
        }
        if (step == tune_steps) break;
        if (Status s = data.sample(tokens.data(), batch, L, stream_seed(rc.data_seed + kTuneStream, step)); !s.ok())
          return s;
        float loss = 0.0f;
        if (Status s = m->train_step(tokens.data(), batch, L, lr, &loss, nullptr, {nullptr, scaling, factor}); !s.ok())
          return s;
        out->tune_loss[k].push_back(loss);
        if (!sink.step(step, loss)) return {StatusCode::kBadArgument, "cancelled"};
      }
    }
    out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "out of memory"};
  }
  return Status::Ok();
}

}  // namespace posenc::lab
