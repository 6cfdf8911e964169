// What the experiments share (eval.cpp: run_scheme; extend.cpp: run_extension): the checks of a
// RunConfig and the training run of one scheme, as the card describes it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "posenc/lab.hpp"

namespace posenc::lab::detail {

// A Progress callback seen from one part of a longer run: step s of this part is offset + s of total.
struct ProgressSink {
  Progress fn = nullptr;
  void* user = nullptr;
  std::size_t offset = 0, total = 0;
  bool step(std::size_t s, float loss) const { return fn == nullptr || fn(user, offset + s, total, loss); }
};

struct Trained {
  std::vector<float> train_loss;  // one per step
  std::size_t clipped_steps = 0;
  double seconds = 0.0;
};

// The rules of a RunConfig that run_scheme and run_extension share (run_check and extend_check
// add their own): batch, eval_batch, total_steps, peak_lr, train_len (>= 4, a multiple of 4 for copy
// and flipflop) and random_positions.
Status check_run(Task task, const RunConfig& rc) noexcept;
// The rows of a run's calls within what one call takes (shape_check), once their lengths are
// within kMaxSeqLen: batch rows of train_len (a fine-tuning batch holds no more tokens), and
// eval_batch rows of the longest length evaluated (run_check: 8 · train_len; extend_check:
// 2 · factor · train_len). Without it a run would fail after training, at its last evaluation.
Status check_run_rows(const RunConfig& rc, std::size_t longest) noexcept;
// A fresh model of the scheme (vocabulary from the data, max_positions from random_positions)
// trained for rc.schedule.total_steps: batch s = sample(batch, T, stream_seed(data_seed, s)), at
// random_positions(…, stream_seed(data_seed + kPositionStream, s)) if asked. May throw bad_alloc.
Status train(const Dataset& data, const RunConfig& rc, Scheme scheme, std::unique_ptr<Model>* model, Trained* out,
             const ProgressSink& progress);

}  // namespace posenc::lab::detail
