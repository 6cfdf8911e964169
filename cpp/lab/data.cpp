// The lab's tasks: a seeded order-2 Markov source with its exact entropy rate, the copy task,
// flip-flop (Liu et al. 2023) and character-level text. Every batch is a function of
// (dataset, sample_seed) only.
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "lab/rng.hpp"
#include "posenc/lab.hpp"
#include "refusals.hpp"

namespace posenc::lab {
namespace {

constexpr const char* kTaskNames[] = {"markov", "copy", "flipflop", "text"};
static_assert(sizeof kTaskNames / sizeof kTaskNames[0] == kNumTasks);

// Flip-flop: tokens 0 and 1 are the values, then the instructions write, ignore, read with these
// probabilities — denser than Liu et al. 2023's FFL(0.8), whose reads (0.1) no lab model learned.
constexpr std::int32_t kWrite = 2, kIgnore = 3, kRead = 4;
constexpr double kPWrite = 0.25, kPIgnore = 0.5, kPRead = 0.25;

// Index of the first cumulative weight above u·total (weights w[n], total their sum).
std::size_t draw(const double* w, std::size_t n, double u) {
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    acc += w[i];
    if (u < acc) return i;
  }
  return n - 1;  // u within rounding of the total
}

}  // namespace

struct Dataset::Impl {
  Task task;
  std::size_t vocab = 0;
  std::vector<double> prob;        // markov: P(c | a, b) at (a V + b) V + c
  std::vector<double> stationary;  // markov: π(a, b) at a V + b
  double entropy_rate = std::numeric_limits<double>::quiet_NaN();
  double first_entropy = std::numeric_limits<double>::quiet_NaN();  // markov: H(X₁ | X₀)
  std::vector<std::int32_t> text;                                   // text: ids
};

const char* task_name(Task task) noexcept {
  const int i = static_cast<int>(task);
  return i >= 0 && i < static_cast<int>(kNumTasks) ? kTaskNames[i] : "unknown";
}

Status parse_task(const char* name, Task* out) noexcept {
  if (name == nullptr || out == nullptr) return bad("task must not be null");
  for (int i = 0; i < static_cast<int>(kNumTasks); ++i)
    if (std::strcmp(name, kTaskNames[i]) == 0) {
      *out = static_cast<Task>(i);
      return Status::Ok();
    }
  return bad("task must be one of markov, copy, flipflop, text");
}

namespace {

// Rows P(· | a, b) ∝ exp(peak z), then π of the pair chain (a, b) → (b, c) by power iteration
// (every transition is positive, so the chain is irreducible and aperiodic and this converges),
// then h = -Σ π(a, b) Σ_c P(c | a, b) log P(c | a, b) and H(X₁ | X₀) = H(π) - H(π's marginal).
void build_markov(Dataset::Impl& d, std::uint64_t seed, double peak) {
  const std::size_t V = d.vocab, pairs = V * V;
  detail::Rng rng(seed);
  d.prob.resize(pairs * V);
  for (std::size_t ctx = 0; ctx < pairs; ++ctx) {
    double* row = d.prob.data() + ctx * V;
    double total = 0.0;
    for (std::size_t c = 0; c < V; ++c) total += row[c] = std::exp(peak * rng.normal());
    for (std::size_t c = 0; c < V; ++c) row[c] /= total;
  }
  std::vector<double> pi(pairs, 1.0 / static_cast<double>(pairs)), next(pairs);
  for (int it = 0; it < 20000; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t a = 0; a < V; ++a)
      for (std::size_t b = 0; b < V; ++b) {
        const double w = pi[a * V + b];
        const double* row = d.prob.data() + (a * V + b) * V;
        for (std::size_t c = 0; c < V; ++c) next[b * V + c] += w * row[c];
      }
    double change = 0.0, total = 0.0;
    for (double v : next) total += v;
    for (std::size_t i = 0; i < pairs; ++i) {
      next[i] /= total;
      change += std::fabs(next[i] - pi[i]);
    }
    pi.swap(next);
    if (change < 1e-14) break;  // L1; float64 rounding sits near 1e-16
  }
  d.stationary = pi;
  double h = 0.0, h_pair = 0.0, h_first = 0.0;
  for (std::size_t ctx = 0; ctx < pairs; ++ctx) {
    const double* row = d.prob.data() + ctx * V;
    double row_h = 0.0;
    for (std::size_t c = 0; c < V; ++c) row_h -= row[c] * std::log(row[c]);
    h += pi[ctx] * row_h;
    if (pi[ctx] > 0.0) h_pair -= pi[ctx] * std::log(pi[ctx]);
  }
  for (std::size_t a = 0; a < V; ++a) {
    double marginal = 0.0;
    for (std::size_t b = 0; b < V; ++b) marginal += pi[a * V + b];
    if (marginal > 0.0) h_first -= marginal * std::log(marginal);
  }
  d.entropy_rate = h;
  d.first_entropy = h_pair - h_first;
}

}  // namespace

Dataset::Dataset(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Dataset::~Dataset() = default;

Status Dataset::check(const DatasetConfig& config) noexcept {
  switch (config.task) {
    case Task::kMarkov:
      if (config.vocab_size < 2 || config.vocab_size > 256) return bad("vocab_size must be in [2, 256] for markov");
      if (!(std::isfinite(config.peak) && config.peak >= 0.0 && config.peak <= 20.0))
        return bad("peak must be finite and in [0, 20]");
      return Status::Ok();
    case Task::kCopy:
      // The model's limit (kMaxVocab): the copy task draws from every token a model may have.
      static_assert(kMaxVocab == 65536, "update the message that states it");
      if (config.vocab_size < 2 || config.vocab_size > kMaxVocab)
        return bad("vocab_size must be in [2, 65536] for copy");
      return Status::Ok();
    case Task::kFlipFlop: return Status::Ok();  // vocab_size is not used
    case Task::kText:
      if (config.text_len < 2) return bad("text must have at least 2 bytes");
      if (config.text_len > (std::size_t{1} << 31)) return {StatusCode::kTooLarge, "text must be <= 2^31 bytes"};
      return Status::Ok();
    default: return bad("task must be one of markov, copy, flipflop, text");
  }
}

Status Dataset::create(const DatasetConfig& config, std::unique_ptr<Dataset>* out) noexcept {
  if (out == nullptr) return bad("out must not be null");
  if (Status s = check(config); !s.ok()) return s;
  try {
    auto d = std::make_unique<Impl>();
    d->task = config.task;
    switch (config.task) {
      case Task::kMarkov:
        d->vocab = config.vocab_size;
        build_markov(*d, config.seed, config.peak);
        break;
      case Task::kCopy: d->vocab = config.vocab_size; break;
      case Task::kFlipFlop:
        d->vocab = 5;  // vocab_size is not used
        break;
      case Task::kText: {
        if (config.text == nullptr) return bad("text must not be null");
        std::int32_t id[256];
        bool seen[256] = {};
        for (std::size_t i = 0; i < config.text_len; ++i) seen[config.text[i]] = true;
        std::int32_t n = 0;
        for (int b = 0; b < 256; ++b) id[b] = seen[b] ? n++ : -1;
        if (n < 2) return bad("text must have at least 2 distinct bytes");
        d->vocab = static_cast<std::size_t>(n);
        d->text.resize(config.text_len);
        for (std::size_t i = 0; i < config.text_len; ++i) d->text[i] = id[config.text[i]];
        break;
      }
      default: break;  // check() refused it
    }
    out->reset(new Dataset(std::move(d)));
  } catch (const std::bad_alloc&) {
    return {StatusCode::kTooLarge, "out of memory"};
  }
  return Status::Ok();
}

Task Dataset::task() const noexcept { return impl_->task; }
std::size_t Dataset::vocab_size() const noexcept { return impl_->vocab; }
double Dataset::entropy_rate() const noexcept { return impl_->entropy_rate; }
const double* Dataset::transition() const noexcept {
  return impl_->task == Task::kMarkov ? impl_->prob.data() : nullptr;
}

double Dataset::loss_floor(std::size_t seq_len) const noexcept {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (seq_len < 2) return nan;
  const double targets = static_cast<double>(seq_len - 1);
  switch (impl_->task) {
    case Task::kMarkov:
      return (impl_->first_entropy + static_cast<double>(seq_len - 2) * impl_->entropy_rate) / targets;
    case Task::kCopy:
      if (seq_len % 2 != 0) return nan;
      return static_cast<double>(seq_len / 2 - 1) * std::log(static_cast<double>(impl_->vocab)) / targets;
    case Task::kFlipFlop: {
      // Targets: the first value (after the opening write), then per later pair an instruction
      // (entropy H of the three probabilities) and a value (ln 2 unless the instruction is a read).
      if (seq_len % 2 != 0) return nan;
      const double h_instr = -(kPWrite * std::log(kPWrite) + kPIgnore * std::log(kPIgnore) + kPRead * std::log(kPRead));
      const double later = static_cast<double>(seq_len / 2 - 1);
      return (std::log(2.0) + later * (h_instr + (1.0 - kPRead) * std::log(2.0))) / targets;
    }
    default: return nan;
  }
}

Status Dataset::sample(std::int32_t* tokens, std::size_t batch, std::size_t seq_len,
                       std::uint64_t sample_seed) const noexcept {
  if (tokens == nullptr) return bad("tokens must not be null");
  if (Status s = shape_check(batch, seq_len); !s.ok()) return s;
  const Impl& d = *impl_;
  if (d.task == Task::kCopy && seq_len % 2 != 0) return bad("seq_len must be even for copy");
  if (d.task == Task::kFlipFlop && seq_len % 2 != 0) return bad("seq_len must be even for flipflop");
  if (d.task == Task::kText && seq_len > d.text.size()) return bad("seq_len must be <= the text's length");
  detail::Rng rng(sample_seed);
  const std::size_t V = d.vocab;
  for (std::size_t b = 0; b < batch; ++b) {
    std::int32_t* row = tokens + b * seq_len;
    switch (d.task) {
      case Task::kMarkov: {
        const std::size_t pair = draw(d.stationary.data(), V * V, rng.uniform());
        row[0] = static_cast<std::int32_t>(pair / V);
        row[1] = static_cast<std::int32_t>(pair % V);
        for (std::size_t t = 2; t < seq_len; ++t) {
          const double* p =
              d.prob.data() + (static_cast<std::size_t>(row[t - 2]) * V + static_cast<std::size_t>(row[t - 1])) * V;
          row[t] = static_cast<std::int32_t>(draw(p, V, rng.uniform()));
        }
        break;
      }
      case Task::kCopy: {
        const std::size_t half = seq_len / 2;
        for (std::size_t t = 0; t < half; ++t)
          row[t] = row[t + half] = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(V)));
        break;
      }
      case Task::kFlipFlop: {
        std::int32_t stored = 0;
        for (std::size_t t = 0; t < seq_len; t += 2) {
          const double u = rng.uniform();
          const std::int32_t op = t == 0 || u < kPWrite ? kWrite : u < kPWrite + kPIgnore ? kIgnore : kRead;
          const std::int32_t value = op == kRead ? stored : static_cast<std::int32_t>(rng.below(2));
          if (op == kWrite) stored = value;
          row[t] = op;
          row[t + 1] = value;
        }
        break;
      }
      case Task::kText: {
        const std::size_t start = rng.below(static_cast<std::uint32_t>(d.text.size() - seq_len + 1));
        for (std::size_t t = 0; t < seq_len; ++t) row[t] = d.text[start + t];
        break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace posenc::lab
