// posenc: the extrapolation lab. A tiny GPT-2-style decoder (float32, pre-LN, tied embeddings),
// trained once per positional scheme on the same data and evaluated beyond its training length.
// Forward and backward are written by hand (cpp/lab/), the hot loops are SIMD kernels. The
// model card, tasks and CLI are in docs/lab.md.
//
// Shapes: a batch of tokens is int32 tokens[batch][seq_len], row-major; weights are float32
// row-major with linear layers stored [in][out] (y = x·W). Nothing here throws: every fallible
// call returns a Status (kTooLarge also when memory runs out). A Model is not thread-safe; separate
// Models are independent. Deterministic: the same seed and calls give the same bits on one SIMD
// target (targets differ by float rounding: fused multiply-add, vector width).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posenc/rope.hpp"
#include "posenc/status.hpp"

namespace posenc::lab {

enum class Scheme : int {
  kNone = 0,     // NoPE: x₀ = tok_emb[token]
  kSinusoidal,   // x₀ = tok_emb[token]·√d_model + the interleaved sinusoidal table (base 10000)
  kLearned,      // x₀ = tok_emb[token] + pos_emb[pos], pos_emb [max_positions][d_model]
  kRope,         // half-split RoPE (θ 10000, rot_dim = head_dim) on q and k in every layer
  kAlibi,        // scores += -m_h (i - j), posenc::alibi_slopes(n_heads)
  kT5,           // scores += t5_bias[bucket(j - i)][h], 32 causal buckets, max distance 128, shared
  kXpos,         // rope's rotation with xPos's scale (Sun et al. 2022; posenc::Xpos, γ 512, centre 0):
                 //   q at t × ζ_k^(t/γ), k at t × ζ_k^(−t/γ), ζ_k = (2k/head_dim + 0.4)/1.4
  kKerpleLog,    // KERPLE (Chi et al. 2022), logarithmic: scores += −r1_h log(1 + r2_h (i − j)), r1, r2 > 0
                 //   learned per head (shared by the layers) as softplus(kerple_r1), softplus(kerple_r2)
  kKerplePower,  // KERPLE, power: scores += −r1_h (i − j)^r2_h, r1 = softplus(kerple_r1) > 0,
                 //   r2 = 2 sigmoid(kerple_r2) in (0, 2)
  kFire,         // FIRE (Li et al. 2023): scores += f(ψ(i − j) / ψ(max(L, i))), ψ(t) = log(1 + c t),
                 //   f an MLP 1 → 32 → n_heads (ReLU) per layer, c and L learned per layer (fire.cpp)
  kCope,         // CoPE (Golovneva et al. 2024): scores += q_i·e[p_ij], p_ij = Σ_{t=j..i} σ(score_it) clamped
                 //   to train_len, e [train_len + 1][d_model] per layer (head h: its columns), interpolated
                 //   between rows (cope.cpp); positions ids are not used
  kPRope,        // p-RoPE (Barbero et al. 2024): rope with its lowest frequencies removed; the first
                 //   ⌊0.75·head_dim/2⌋ pairs rotate as rope's, the others not (posenc's kProportional)
  // The mixed-layer schemes: a pattern of position handling per layer. Layer l is a "global" layer
  // iff (l + 1) % k == 0, k = min(the model's interval, n_layers) (HF's rule; with 2 layers: layer 1),
  // the others "local". RoPE as rope's (half-split, rot_dim = head_dim); W = max(2, train_len / 4)
  // keys (the query's own included) on the sliding-window layers, counted in tokens.
  kIrope,         // Llama 4's iRoPE (k 4): local RoPE θ 10000, full causal; global NoPE with the queries ×
                  //   irope_attention_scale(pos, floor_scale = max(1, train_len / 32), attn_scale 0.1)
  kNopeInterval,  // SmolLM3's no_rope_layer_interval (k 4): local RoPE θ 10000, global NoPE, both full causal
  kGemma3,        // Gemma 3 (k 6): local RoPE θ 10000 in a sliding window of W, global RoPE θ 1000000 full causal
  kSwaRopeNope,   // Cohere 2 / Command A (k 4): local RoPE θ 10000 in a sliding window of W, global NoPE
};
constexpr std::size_t kNumSchemes = 16;

// "none", "sinusoidal", "learned", "rope", "alibi", "t5", "xpos", "kerple_log", "kerple_power", "fire",
// "cope", "p_rope", "irope", "nope_interval", "gemma3", "swa_rope_nope".
const char* scheme_name(Scheme scheme) noexcept;
// Status kBadArgument "scheme must be one of none, sinusoidal, learned, rope, alibi, t5, xpos, kerple_log,
// kerple_power, fire, cope, p_rope, irope, nope_interval, gemma3, swa_rope_nope".
Status parse_scheme(const char* name, Scheme* out) noexcept;

// The longest row a model takes (seq_len, train_len, max_positions) and the most tokens one call
// takes (batch · seq_len): limits that keep every product of sizes far from overflow.
constexpr std::size_t kMaxSeqLen = 65536;
constexpr std::size_t kMaxTokens = std::size_t{1} << 24;
// The largest vocabulary a model takes (ModelConfig::vocab_size), and so the copy task's.
constexpr std::size_t kMaxVocab = 65536;
// The rule of a call's rows, tokens[batch][seq_len]: kBadArgument "batch must be > 0", "seq_len must
// be in [2, 65536]" (kMaxSeqLen); kTooLarge "batch * seq_len must be <= 2^24" (kMaxTokens). Every
// call on rows runs it first (Model's loss_and_gradients, train_step and evaluate, footprint,
// Dataset::sample); the JS layer asks it before it copies the tokens.
Status shape_check(std::size_t batch, std::size_t seq_len) noexcept;

struct ModelConfig {
  std::size_t vocab_size = 32;  // >= 2
  std::size_t d_model = 64;     // a multiple of n_heads; head_dim = d_model / n_heads (even for rope)
  std::size_t n_layers = 2;
  std::size_t n_heads = 4;
  std::size_t train_len = 64;  // T_train: the original length for RoPE scaling (and FIRE's init of L)
  // The positions the model can be given are [0, max_positions): rows of pos_emb. 0 means train_len;
  // otherwise in [train_len, kMaxSeqLen]. Randomized positions (RunConfig) train at positions up to it.
  std::size_t max_positions = 0;
  Scheme scheme = Scheme::kRope;
  std::uint64_t seed = 0;  // initialisation
};

// One parameter tensor: shape [rows][cols] (rank 2) or [cols] (rank 1, rows = 1).
struct TensorView {
  const char* name;  // "tok_emb", "pos_emb", "t5_bias", "blocks.{l}.wq", ..., "ln_f.bias"
  std::size_t rank;
  std::size_t rows;
  std::size_t cols;
  float* data;  // rows * cols values, owned by the Model
  float* grad;  // the gradient of the last loss_and_gradients / train_step
};

// What a model has learned about positions, in the scheme's own terms (for plots): learned
// "pos_emb" [train_len][d_model]; t5 "t5_bias" [32][n_heads]; KERPLE "r1" and "r2" [n_heads]
// (after their positivity maps); FIRE per layer l "blocks.{l}.fire.c" and "blocks.{l}.fire.L" [1]
// and "blocks.{l}.fire.f" [65][n_heads], its bias f(x) at x = k/64, k = 0 … 64; CoPE per layer
// "blocks.{l}.cope.e" [train_len + 1][d_model]. None for the other schemes.
struct PositionArray {
  std::string name;
  std::vector<std::size_t> shape;
  std::vector<float> values;  // row-major
};
constexpr std::size_t kFirePoints = 65;

// AdamW's learning rate at a step (0-based): linear warm-up peak_lr (step + 1) / warmup_steps, then
// cosine decay from peak_lr to final_fraction · peak_lr at step total_steps - 1 (and after).
struct Schedule {
  double peak_lr = 3e-3;
  std::size_t warmup_steps = 50;
  std::size_t total_steps = 1000;
  double final_fraction = 0.1;
};
double learning_rate(const Schedule& schedule, std::size_t step) noexcept;

// The optimiser's constants (the model card): AdamW β1 0.9, β2 0.99, eps 1e-8, weight decay 0.1
// on the blocks' matrices (wq wk wv wo w1 w2) only, global gradient-norm clip 1.0.
constexpr double kAdamBeta1 = 0.9;
constexpr double kAdamBeta2 = 0.99;
constexpr double kAdamEps = 1e-8;
constexpr double kWeightDecay = 0.1;
constexpr double kGradClip = 1.0;

// The inference-time RoPE scalings the lab evaluates (EvalOptions::rope_scaling; run() evaluates
// each of them but kNone at the lengths past train_len).
constexpr RopeScaling kRopeScalings[] = {RopeScaling::kNone, RopeScaling::kLinear, RopeScaling::kNtk,
                                         RopeScaling::kDynamic, RopeScaling::kYarn};

struct EvalOptions {
  // kRope and kXpos (its rotation; the decay stays): a scaling from posenc::rope_frequencies with
  // factor rope_factor, or max(1, seq_len / train_len) for 0: kLinear (position interpolation), kNtk,
  // kDynamic (factor 2 for 0, max_position_embeddings = train_len, grows with seq_len), kYarn
  // (original_max_position_embeddings = train_len, with its attention factor on cos and sin).
  RopeScaling rope_scaling = RopeScaling::kNone;  // one of kRopeScalings
  double rope_factor = 0.0;                       // 0 or finite and >= 1
};

// A training step's options: positions [batch][seq_len] (null: 0 … seq_len − 1 in every row), the
// position of each token, strictly increasing along a row, in [0, max_positions) — every scheme uses
// them where it uses a position (the tables at pos, the biases at pos_i − pos_j, FIRE's
// max(L, pos_i)); and a RoPE scaling to train with (fine-tuning at a longer length, as EvalOptions).
struct StepOptions {
  const std::int32_t* positions = nullptr;
  RopeScaling rope_scaling = RopeScaling::kNone;
  double rope_factor = 0.0;
};

// What a model of `config` allocates, in floats: its parameters (gradients and the two AdamW
// moments are as many again each), and at most one call's activations on [batch][seq_len]
// (evaluate: batch 1) — for callers that refuse sizes before anything is allocated (in WebAssembly a
// failed allocation aborts). Status as Model::create for the config, as shape_check for batch
// and seq_len; kTooLarge if memory runs out. 64-bit counts, also in 32-bit WebAssembly.
struct Footprint {
  std::uint64_t params = 0, activations = 0;
};
Status footprint(const ModelConfig& config, std::size_t batch, std::size_t seq_len, Footprint* out) noexcept;

class Model {
 public:
  // Status kBadArgument naming the field (vocab_size >= 2, d_model, n_layers, n_heads, train_len
  // >= 2, d_model % n_heads == 0, even head_dim for rope, sizes within limits).
  static Status create(const ModelConfig& config, std::unique_ptr<Model>* out) noexcept;
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const noexcept;
  std::size_t n_tensors() const noexcept;
  TensorView tensor(std::size_t i) const noexcept;  // i < n_tensors(), in the order above
  // Status kBadArgument "no tensor of that name" if the model has none (e.g. pos_emb for rope).
  Status find_tensor(const char* name, TensorView* out) const noexcept;
  std::size_t n_params() const noexcept;
  std::size_t steps_taken() const noexcept;  // AdamW steps so far
  // The scheme's position parameters (PositionArray above); kTooLarge if memory runs out.
  Status position_parameters(std::vector<PositionArray>* out) const noexcept;

  // The mean next-token cross-entropy over batch · (seq_len - 1) targets (nats), and every
  // tensor's gradient (StepOptions above). Status as shape_check; kBadArgument: null tokens, a
  // token outside [0, vocab_size), a row of positions not increasing or out of range, a scaling as
  // evaluate refuses it; kBadShape: learned scheme and seq_len > max_positions.
  Status loss_and_gradients(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, float* loss,
                            const StepOptions& options = {}) noexcept;
  // loss_and_gradients, global gradient-norm clip, one AdamW step at learning rate lr (finite,
  // >= 0). loss is the loss before the update; grad_norm (may be null) the norm before clipping.
  Status train_step(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, double lr, float* loss,
                    float* grad_norm = nullptr, const StepOptions& options = {}) noexcept;
  // Forward only, one row at a time (memory ~ n_heads · seq_len² per layer). loss: the mean over all
  // targets; position_loss[seq_len - 1] (may be null): the mean over rows of the loss of predicting
  // token t + 1. Status as loss_and_gradients, and kBadArgument for rope_scaling with another
  // scheme than rope and xpos (kLlama3, kLongRope, kProportional are not offered).
  Status evaluate(const std::int32_t* tokens, std::size_t batch, std::size_t seq_len, const EvalOptions& options,
                  double* loss, double* position_loss) noexcept;

  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

// ---- Data -------------------------------------------------------------------------------------

enum class Task : int {
  kMarkov = 0,  // seeded order-2 Markov source, peaked rows; exact entropy rate
  kCopy,        // seq_len/2 uniform random tokens, then the same again
  kFlipFlop,    // pairs (instruction, value): write/ignore a random bit, or read the last written
  kText,        // character level over the bytes given (vocabulary: the distinct bytes, sorted)
};
const char* task_name(Task task) noexcept;  // "markov", "copy", "flipflop", "text"
constexpr std::size_t kNumTasks = 4;
Status parse_task(const char* name, Task* out) noexcept;

struct DatasetConfig {
  Task task = Task::kMarkov;
  std::size_t vocab_size = 32;         // markov and copy (>= 2; markov <= 256); flipflop 5; text: from the bytes
  std::uint64_t seed = 0;              // markov: the transition table
  double peak = 3.0;                   // markov: row c|ab ∝ exp(peak · z_c), z ~ N(0, 1) seeded
  const std::uint8_t* text = nullptr;  // text: the bytes (copied), at least 2 and 2 distinct
  std::size_t text_len = 0;
};

class Dataset {
 public:
  static Status create(const DatasetConfig& config, std::unique_ptr<Dataset>* out) noexcept;
  // create()'s rules that read no text (all but the text's distinct bytes): the task, vocab_size and
  // peak, and text_len. create() runs it first; a caller can run it before it copies the text (the
  // JS layer does).
  static Status check(const DatasetConfig& config) noexcept;
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  Task task() const noexcept;
  std::size_t vocab_size() const noexcept;
  // markov: the exact entropy rate (nats/token) from the stationary distribution of the pair
  // chain (a, b) → (b, c); NaN for copy and text.
  double entropy_rate() const noexcept;
  // The least expected mean loss over the seq_len - 1 targets of a row: markov
  // (H(X₁|X₀) + (seq_len - 2) h) / (seq_len - 1), rows starting in the stationary pair
  // distribution; copy ((seq_len/2 - 1) ln V) / (seq_len - 1) for even seq_len; flipflop
  // (ln 2 + (seq_len/2 - 1)(H(0.25, 0.5, 0.25) + 0.75 ln 2)) / (seq_len - 1) for even seq_len; NaN for text.
  double loss_floor(std::size_t seq_len) const noexcept;
  // markov: P(c | a, b) at [(a V + b) V + c]; null for the other tasks.
  const double* transition() const noexcept;
  // tokens[batch][seq_len], a function of (dataset, sample_seed) only. Status as shape_check;
  // kBadArgument for null tokens; copy and flipflop need an even seq_len; text needs seq_len <= its
  // length.
  Status sample(std::int32_t* tokens, std::size_t batch, std::size_t seq_len, std::uint64_t sample_seed) const noexcept;

  struct Impl;

 private:
  explicit Dataset(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

// ---- A whole experiment: train one scheme, evaluate at train_len × {1/2, 1, 2, 4, 8} -------------

struct RunConfig {
  ModelConfig model;  // vocab_size is taken from the dataset, scheme from run_scheme's argument
  Schedule schedule;  // total_steps training steps
  std::size_t batch = 16;
  std::size_t eval_batch = 16;  // rows per evaluation length (the same rows for every scheme)
  std::uint64_t data_seed = 1;  // training batch s: sample_seed = stream_seed(data_seed, s)
  std::uint64_t eval_seed = 7;  // evaluation rows at length L: stream_seed(eval_seed, L)
  // Randomized positions (Ruoss et al. 2023): 0 trains at 0 … train_len − 1; L_max in [train_len,
  // 65536] (the shipped runs use 8 · train_len) gives training batch s the positions
  // random_positions(…, L_max, stream_seed(data_seed + kPositionStream, s)) and the model
  // max_positions = L_max. Evaluation always uses 0 … L − 1.
  std::size_t random_positions = 0;
};
constexpr std::uint64_t kPositionStream = std::uint64_t{1} << 32;

// Randomized positions for a batch: each row of out[batch][seq_len] a uniform sorted subset of
// [0, max_position) (seq_len <= max_position), by selection sampling (Knuth's Algorithm S): with
// SplitMix64 seeded by seed, position p = 0, 1, … is taken with probability (seq_len − taken) /
// (max_position − p), i.e. when uniform() · (max_position − p) < seq_len − taken (uniform: 53 bits, rng.hpp).
Status random_positions(std::int32_t* out, std::size_t batch, std::size_t seq_len, std::size_t max_position,
                        std::uint64_t seed) noexcept;
// random_positions' rule, which it runs first (the JS layer before it allocates): kBadArgument
// unless seq_len is in [1, max_position] and max_position <= 2^31; the count of a call's rows as
// shape_check states it (the positions of a call's tokens): kBadArgument for batch 0, kTooLarge
// unless batch · seq_len <= kMaxTokens.
Status random_positions_check(std::size_t batch, std::size_t seq_len, std::size_t max_position) noexcept;

struct EvalRow {
  std::size_t length;
  RopeScaling scaling;  // kNone except the rope rows with scaling
  bool no_embedding;    // learned beyond train_len: no number (loss and buckets NaN)
  double loss;
  double floor;                     // the dataset's loss_floor(length) (NaN if unknown)
  std::size_t bucket_width;         // positions per bucket: max(1, train_len / 4)
  std::vector<double> bucket_loss;  // mean loss of the targets at positions [b w, (b + 1) w)
};

struct SchemeResult {
  Scheme scheme;
  std::vector<float> train_loss;        // one per step
  std::size_t clipped_steps;            // steps whose global gradient norm was above 1 (and was clipped)
  std::vector<PositionArray> position;  // the trained model's position_parameters()
  std::vector<EvalRow> eval;            // lengths ascending; for rope, each longer length once per scaling
  double train_seconds;
};

// The seed of stream `index` of `seed`: the first SplitMix64 output from the state
// seed ^ (index · 0xD1B54A32D192ED03 + 0x8CB92BA72F3D8DD7). run_scheme samples training batch s with
// stream_seed(data_seed, s) and the evaluation rows at length L with stream_seed(eval_seed, L).
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t index) noexcept;

// train_step's rule of lr, which it runs first (the JS layer before it copies the tokens):
// kBadArgument unless lr is finite and >= 0.
Status lr_check(double lr) noexcept;

// Called every step; return false to cancel (run_scheme then returns kBadArgument "cancelled").
using Progress = bool (*)(void* user, std::size_t step, std::size_t total_steps, float loss);

Status run_scheme(const Dataset& data, const RunConfig& config, Scheme scheme, SchemeResult* out,
                  Progress progress = nullptr, void* user = nullptr) noexcept;
// run_scheme's rules of config for data of a task, which it runs first (the JS layer before it makes
// the dataset): batch and eval_batch > 0, total_steps > 0, peak_lr as lr_check's lr (0 trains
// nothing: the weights stay at their init), train_len in [4, 8192] (it is evaluated at up to
// 8 · train_len <= 65536) and a multiple of 4 for copy and flipflop, random_positions 0 or in
// [train_len, 65536]; kTooLarge unless the rows of its calls are within one call's (shape_check:
// batch · train_len and eval_batch · 8 · train_len <= 2^24). Status: kBadArgument naming the field.
// The model's own rules are Model::create's (footprint).
Status run_check(Task task, const RunConfig& config) noexcept;

// ---- Context extension by fine-tuning (Chen et al. 2023, PI; Peng et al. 2023, YaRN) -------------

// The scalings an extension fine-tunes with: none, linear (position interpolation), ntk, yarn.
constexpr RopeScaling kExtendScalings[] = {RopeScaling::kNone, RopeScaling::kLinear, RopeScaling::kNtk,
                                           RopeScaling::kYarn};

struct ExtendConfig {
  std::size_t factor = 4;  // the new length L = factor · train_len (and the scalings' factor), >= 2
  // Fine-tuning steps after which the model is evaluated at L and 2·L; ascending, the last is the
  // number of steps taken. 0 is the trained model with the scaling at inference only.
  std::vector<std::size_t> checkpoints = {0, 25, 100, 400};
};

struct ExtendRow {
  RopeScaling scaling;
  std::size_t steps;   // fine-tuning steps taken
  std::size_t length;  // L or 2·L
  double loss;         // the mean loss of the evaluation rows at that length (stream(eval_seed, length))
};

struct ExtendResult {
  Scheme scheme;
  std::vector<float> train_loss;              // the base run at train_len, as run_scheme's
  std::vector<std::vector<float>> tune_loss;  // per kExtendScalings entry, one per fine-tuning step
  std::vector<ExtendRow> rows;                // per scaling, per checkpoint: L, then 2·L
  double seconds;
};

// Trains the scheme (rope or xpos) as run_scheme does, then per scaling fine-tunes a copy of it at
// L with that scaling at factor `factor` — fresh AdamW moments, the base run's last learning rate
// peak_lr · final_fraction held constant, batch max(1, batch / factor) rows of L (about the tokens of
// a base step), batch s of scaling k sampled with stream_seed(data_seed + kTuneStream, s) (the same
// rows for every scaling) — and evaluates at the checkpoints with the same scaling and factor.
// Progress counts the base steps, then each scaling's.
constexpr std::uint64_t kTuneStream = std::uint64_t{2} << 32;
Status run_extension(const Dataset& data, const RunConfig& config, Scheme scheme, const ExtendConfig& extend,
                     ExtendResult* out, Progress progress = nullptr, void* user = nullptr) noexcept;
// run_extension's rules of its configs (all but the scheme's, rope or xpos), which it runs first
// (the JS layer before it makes the dataset): factor in [2, 64]; checkpoints not empty, distinct,
// ascending and <= 100000; run_scheme's rules but train_len's bound above, no random_positions;
// factor · train_len <= 32768 (evaluated at twice that); kTooLarge unless the rows of its calls are
// within one call's (batch · train_len and eval_batch · 2 · factor · train_len <= 2^24). Status:
// kBadArgument naming the field.
Status extend_check(Task task, const RunConfig& config, const ExtendConfig& extend) noexcept;

}  // namespace posenc::lab
