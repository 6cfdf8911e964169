// One experiment: train a scheme on a dataset with the schedule, then evaluate it at
// train_len × {1/2, 1, 2, 4, 8} on rows that are the same for every scheme (eval_seed), with
// per-position buckets; rope also with each inference-time scaling at the longer lengths; learned
// reports "no embedding" beyond train_len.
#include <chrono>
#include <limits>
#include <new>

#include "lab/model.hpp"
#include "lab/rng.hpp"
#include "lab/run.hpp"
#include "posenc/lab.hpp"

namespace posenc::lab {
namespace {

Status evaluate_row(Model& model, const Dataset& data, const RunConfig& rc, std::size_t length, RopeScaling scaling,
                    std::vector<std::int32_t>& tokens, EvalRow* row) {
  const std::size_t T = rc.model.train_len;
  row->length = length;
  row->scaling = scaling;
  row->floor = data.loss_floor(length);
  row->bucket_width = T / 4 > 0 ? T / 4 : 1;
  const std::size_t n_buckets = (length - 1 + row->bucket_width - 1) / row->bucket_width;
  const ModelConfig& mc = model.config();
  row->no_embedding = mc.scheme == Scheme::kLearned && length > (mc.max_positions != 0 ? mc.max_positions : T);
  if (row->no_embedding) {
    row->loss = std::numeric_limits<double>::quiet_NaN();
    row->bucket_loss.assign(n_buckets, row->loss);
    return Status::Ok();
  }
  tokens.resize(rc.eval_batch * length);
  if (Status s = data.sample(tokens.data(), rc.eval_batch, length, stream_seed(rc.eval_seed, length)); !s.ok())
    return s;
  std::vector<double> per_pos(length - 1);
  EvalOptions o;
  o.rope_scaling = scaling;
  if (Status s = model.evaluate(tokens.data(), rc.eval_batch, length, o, &row->loss, per_pos.data()); !s.ok()) return s;
  row->bucket_loss.assign(n_buckets, 0.0);
  std::vector<std::size_t> count(n_buckets, 0);
  for (std::size_t t = 0; t + 1 < length; ++t) {
    row->bucket_loss[t / row->bucket_width] += per_pos[t];
    ++count[t / row->bucket_width];
  }
  for (std::size_t b = 0; b < n_buckets; ++b) row->bucket_loss[b] /= static_cast<double>(count[b]);
  return Status::Ok();
}

}  // namespace

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t index) noexcept {
  detail::Rng r(seed ^ (index * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
  return r.next();
}

Status random_positions_check(std::size_t batch, std::size_t seq_len, std::size_t max_position) noexcept {
  if (seq_len == 0 || seq_len > max_position || max_position > (std::size_t{1} << 31))
    return {StatusCode::kBadArgument, "seq_len must be in [1, max_position] and max_position <= 2^31"};
  return detail::check_rows(batch, seq_len);
}

Status random_positions(std::int32_t* out, std::size_t batch, std::size_t seq_len, std::size_t max_position,
                        std::uint64_t seed) noexcept {
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  if (Status s = random_positions_check(batch, seq_len, max_position); !s.ok()) return s;
  detail::Rng r(seed);
  for (std::size_t b = 0; b < batch; ++b) {
    std::int32_t* row = out + b * seq_len;
    std::size_t taken = 0;
    for (std::size_t p = 0; p < max_position && taken < seq_len; ++p)
      if (r.uniform() * static_cast<double>(max_position - p) < static_cast<double>(seq_len - taken))
        row[taken++] = static_cast<std::int32_t>(p);
  }
  return Status::Ok();
}

namespace detail {

// The messages here and extend.cpp's state these numbers.
static_assert(kMaxSeqLen == 65536 && kMaxTokens == std::size_t{1} << 24, "update the messages that state them");

Status check_run(Task task, const RunConfig& rc) noexcept {
  if (rc.batch == 0 || rc.eval_batch == 0) return {StatusCode::kBadArgument, "batch and eval_batch must be > 0"};
  if (rc.schedule.total_steps == 0) return {StatusCode::kBadArgument, "total_steps must be > 0"};
  if (Status s = lr_check(rc.schedule.peak_lr); !s.ok()) return s;  // the peak is a learning rate
  if (rc.model.train_len < 4) return {StatusCode::kBadArgument, "train_len must be >= 4"};
  if ((task == Task::kCopy || task == Task::kFlipFlop) && rc.model.train_len % 4 != 0)
    return {StatusCode::kBadArgument, "train_len must be a multiple of 4 for copy and flipflop (every length even)"};
  if (rc.random_positions != 0 && (rc.random_positions < rc.model.train_len || rc.random_positions > kMaxSeqLen))
    return {StatusCode::kBadArgument, "random_positions must be 0 or in [train_len, 65536]"};
  return Status::Ok();
}

Status check_run_rows(const RunConfig& rc, std::size_t longest) noexcept {
  if (!shape_check(rc.batch, rc.model.train_len).ok())
    return {StatusCode::kTooLarge, "batch * train_len must be <= 2^24"};
  if (!shape_check(rc.eval_batch, longest).ok())
    return {StatusCode::kTooLarge,
            "eval_batch * the longest length evaluated (8 · train_len; extend: 2 · factor · train_len) must be <= "
            "2^24"};
  return Status::Ok();
}

Status train(const Dataset& data, const RunConfig& rc, Scheme scheme, std::unique_ptr<Model>* model, Trained* out,
             const ProgressSink& progress) {
  ModelConfig mc = rc.model;
  mc.vocab_size = data.vocab_size();
  mc.scheme = scheme;
  if (rc.random_positions != 0) mc.max_positions = rc.random_positions;
  if (Status s = Model::create(mc, model); !s.ok()) return s;
  out->train_loss.assign(rc.schedule.total_steps, 0.0f);
  out->clipped_steps = 0;
  const std::size_t T = mc.train_len;
  std::vector<std::int32_t> tokens(rc.batch * T), positions(rc.random_positions != 0 ? rc.batch * T : 0);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t step = 0; step < rc.schedule.total_steps; ++step) {
    if (Status s = data.sample(tokens.data(), rc.batch, T, stream_seed(rc.data_seed, step)); !s.ok()) return s;
    if (!positions.empty())
      if (Status s = random_positions(positions.data(), rc.batch, T, rc.random_positions,
                                      stream_seed(rc.data_seed + kPositionStream, step));
          !s.ok())
        return s;
    float loss = 0.0f, grad_norm = 0.0f;
    if (Status s = (*model)->train_step(tokens.data(), rc.batch, T, learning_rate(rc.schedule, step), &loss, &grad_norm,
                                        StepOptions{positions.empty() ? nullptr : positions.data()});
        !s.ok())
      return s;
    out->train_loss[step] = loss;
    if (grad_norm > kGradClip) ++out->clipped_steps;
    if (!progress.step(step, loss)) return {StatusCode::kBadArgument, "cancelled"};
  }
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

}  // namespace detail

Status run_check(Task task, const RunConfig& rc) noexcept {
  if (Status s = detail::check_run(task, rc); !s.ok()) return s;
  if (rc.model.train_len > kMaxSeqLen / 8)
    return {StatusCode::kBadArgument, "train_len must be <= 8192 (evaluated at 8 · train_len, at most 65536)"};
  return detail::check_run_rows(rc, 8 * rc.model.train_len);
}

Status run_scheme(const Dataset& data, const RunConfig& rc, Scheme scheme, SchemeResult* out, Progress progress,
                  void* user) noexcept {
  if (out == nullptr) return {StatusCode::kBadArgument, "out must not be null"};
  if (Status s = run_check(data.task(), rc); !s.ok()) return s;
  try {
    std::unique_ptr<Model> model;
    detail::Trained trained;
    if (Status s = detail::train(data, rc, scheme, &model, &trained, {progress, user, 0, rc.schedule.total_steps});
        !s.ok())
      return s;
    out->scheme = scheme;
    out->train_loss = std::move(trained.train_loss);
    out->clipped_steps = trained.clipped_steps;
    out->train_seconds = trained.seconds;
    out->eval.clear();
    const std::size_t T = rc.model.train_len;
    std::vector<std::int32_t> tokens;

    const std::size_t lengths[] = {T / 2, T, 2 * T, 4 * T, 8 * T};
    for (std::size_t length : lengths) {
      EvalRow row;
      if (Status s = evaluate_row(*model, data, rc, length, RopeScaling::kNone, tokens, &row); !s.ok()) return s;
      out->eval.push_back(std::move(row));
      if (scheme == Scheme::kRope && length > T)
        for (RopeScaling sc : kRopeScalings) {
          if (sc == RopeScaling::kNone) continue;
          EvalRow scaled;
          if (Status s = evaluate_row(*model, data, rc, length, sc, tokens, &scaled); !s.ok()) return s;
          out->eval.push_back(std::move(scaled));
        }
    }
    if (Status s = model->position_parameters(&out->position); !s.ok()) return s;
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "out of memory"};
  }
  return Status::Ok();
}

}  // namespace posenc::lab
