// npm run lab -- [--task markov|copy|flipflop|text] [--text PATH] [--schemes all|rope,alibi,...] [--steps N]
//   [--size tiny|small] [--layers L] [--train-len T] [--batch B] [--lr PEAK] [--seed S] [--seeds N] [--jobs J]
//   [--threads N] [--random-positions L_MAX] [--extend FACTOR [--checkpoints 0,25,100,400]] [--shard K/N]
//   [--out FILE]        or: npm run lab -- --merge SHARD,SHARD,... --out FILE
// Trains the lab model per scheme and per seed S, S + 1, … S + N − 1 (model init and batch order; the
// task's data is seed S's; with --random-positions, training rows at random positions in [0, L_MAX))
// up to --jobs at once, each model's steps on posenc's pool of --threads threads (default 1; jobs
// running together share it: a step that finds it busy runs on its own thread); evaluates each at
// train_len × {1/2, 1, 2, 4, 8}, prints the mean and min–max over the seeds and writes JSON (--out,
// default build/lab-results.json). Results depend only on the arguments (not on --jobs or --threads).
// --shard K/N trains only the jobs j (scheme i, seed S + k: j = i · seeds + k) with j mod N = K and
// writes them as shard K of N; --merge joins the N shard files into the JSON of the whole run.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "posenc/lab.hpp"
#include "posenc/posenc.hpp"

namespace posenc::lab::cli {

std::string utc_now() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

nlohmann::json config_json(const Args& a, const Dataset& data, const RunConfig& rc) {
  return {{"vocabSize", data.vocab_size()},
          {"dModel", rc.model.d_model},
          {"nLayers", rc.model.n_layers},
          {"nHeads", rc.model.n_heads},
          {"trainLength", rc.model.train_len},
          {"batch", rc.batch},
          {"steps", a.steps},
          {"peakLr", a.lr},
          {"warmupSteps", rc.schedule.warmup_steps},
          {"seed", a.seed},
          {"seeds", a.seeds},
          {"evalBatch", rc.eval_batch},
          {"randomPositions", rc.random_positions}};
}

void fail(const std::string& message) {
  std::fprintf(stderr, "lab: %s\n", message.c_str());
  std::exit(2);
}

void check(const Status& s, const char* what) {
  if (!s.ok()) fail(std::string(what) + ": " + s.message);
}

std::string recorded_command(const Args& a) { return a.command + " --out " + a.out; }

void write_file(const nlohmann::json& j, const std::string& path) {
  std::ofstream out(path);
  if (!out) fail("cannot write " + path);
  out << j.dump(1) << "\n";
  out.close();
  if (!out) fail("cannot write " + path);
  std::printf("lab: wrote %s\n", path.c_str());
}

void run_jobs(std::size_t n_jobs, std::size_t threads, const std::function<void(std::size_t)>& job) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads && t < n_jobs; ++t)
    pool.emplace_back([&] {
      for (std::size_t j; (j = next.fetch_add(1)) < n_jobs;) job(j);
    });
  for (auto& t : pool) t.join();
}

}  // namespace posenc::lab::cli

namespace {

using namespace posenc;
using namespace posenc::lab;
using namespace posenc::lab::cli;
using nlohmann::json;

std::size_t parse_size(const char* flag, const char* v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || n == 0) fail(std::string(flag) + " must be a positive integer (got " + v + ")");
  return static_cast<std::size_t>(n);
}

// --shard K/N: 0 <= K < N.
void parse_shard(const char* v, Args* a) {
  char* end = nullptr;
  const unsigned long long k = std::strtoull(v, &end, 10);
  const char* slash = end;
  const unsigned long long n = *slash == '/' ? std::strtoull(slash + 1, &end, 10) : 0;
  if (slash == v || *slash != '/' || end == slash + 1 || *end != '\0' || n == 0 || k >= n)
    fail(std::string("--shard must be K/N with 0 <= K < N (got ") + v + ")");
  a->shard_index = static_cast<std::size_t>(k);
  a->shard_count = static_cast<std::size_t>(n);
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  a.command = "npm run lab --";
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--help" || f == "-h") {
      std::printf(
          "usage: npm run lab -- [--task markov|copy|flipflop|text] [--text PATH] [--schemes all|a,b,...]\n"
          "  [--steps N] [--size tiny|small] [--layers L] [--train-len T] [--batch B] [--lr PEAK] [--seed S]\n"
          "  [--seeds N] [--jobs J] [--threads N] [--random-positions L_MAX]\n"
          "  [--extend FACTOR [--checkpoints 0,25,100,400]] [--shard K/N] [--out FILE]\n"
          "   or: npm run lab -- --merge SHARD,SHARD,... --out FILE\n");
      std::exit(0);
    }
    if (i + 1 >= argc) fail(f + " needs a value");
    const char* v = argv[++i];
    if (f != "--shard" && f != "--merge" && f != "--out") a.command += " " + f + " " + v;
    if (f == "--task") a.task = v;
    else if (f == "--text") a.text_path = v;
    else if (f == "--schemes") a.schemes = v;
    else if (f == "--steps") a.steps = parse_size("--steps", v);
    else if (f == "--size") a.size = v;
    else if (f == "--layers") a.layers = parse_size("--layers", v);
    else if (f == "--train-len") a.train_len = parse_size("--train-len", v);
    else if (f == "--batch") a.batch = parse_size("--batch", v);
    else if (f == "--jobs") a.jobs = parse_size("--jobs", v);
    else if (f == "--threads") a.threads = parse_size("--threads", v);
    else if (f == "--seed") a.seed = parse_size("--seed", v);
    else if (f == "--seeds") a.seeds = parse_size("--seeds", v);
    else if (f == "--random-positions") a.random_positions = parse_size("--random-positions", v);
    else if (f == "--extend") a.extend = parse_size("--extend", v);
    else if (f == "--checkpoints") {
      for (const char* p = v; *p != '\0';) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0'))
          fail(std::string("--checkpoints must be a list like 0,25,100 (got ") + v + ")");
        a.checkpoints.push_back(static_cast<std::size_t>(n));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (f == "--out") a.out = v;
    else if (f == "--shard") parse_shard(v, &a);
    else if (f == "--merge") a.merge = split_list(v);
    else if (f == "--lr") {
      char* end = nullptr;
      a.lr = std::strtod(v, &end);
      if (end == v || *end != '\0') fail(std::string("--lr must be a number (got ") + v + ")");
      if (const Status s = lr_check(a.lr); !s.ok()) fail(std::string("--lr: ") + s.message + " (got " + v + ")");
    } else {
      fail("unknown option " + f + " (see --help)");
    }
  }
  return a;
}

std::vector<Scheme> parse_schemes(const std::string& list) {
  std::vector<Scheme> out;
  if (list == "all") {
    for (std::size_t i = 0; i < kNumSchemes; ++i) out.push_back(static_cast<Scheme>(i));
    return out;
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    Scheme s;
    check(parse_scheme(name.c_str(), &s), ("--schemes " + name).c_str());
    out.push_back(s);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A float as the shortest decimal that reads back as the same float (JSON holds doubles, whose
// 17 digits would double the file): std::to_chars's shortest form, or 9 digits if a double read
// of it would not round back to v.
json float_json(float v) {
  if (!std::isfinite(v)) return json(nullptr);
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  *res.ptr = '\0';
  double d = std::strtod(buf, nullptr);
  if (static_cast<float>(d) != v) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    d = std::strtod(buf, nullptr);
  }
  return json(d);
}

json float_array(const std::vector<float>& values) {
  json out = json::array();
  for (float v : values) out.push_back(float_json(v));
  return out;
}

std::string label(const SchemeResult& r, const EvalRow& e) {
  std::string s = scheme_name(r.scheme);
  if (e.scaling != RopeScaling::kNone) s += "+" + std::string(rope_scaling_name(e.scaling));
  return s;
}

// The dataset --task (and --text) name; text holds the file's bytes for a text task.
std::unique_ptr<Dataset> load_dataset(const Args& a, std::vector<std::uint8_t>* text) {
  DatasetConfig dc;
  check(parse_task(a.task.c_str(), &dc.task), "--task");
  dc.seed = a.seed;
  if (dc.task == Task::kText) {
    if (a.text_path.empty()) fail("--task text needs --text PATH");
    std::ifstream in(a.text_path, std::ios::binary);
    if (!in) fail("cannot read " + a.text_path);
    text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    dc.text = text->data();
    dc.text_len = text->size();
  }
  std::unique_ptr<Dataset> data;
  check(Dataset::create(dc, &data), "dataset");
  return data;
}

// The model, schedule and batch the options give.
RunConfig run_config(const Args& a) {
  RunConfig rc;
  if (a.size == "tiny") {
    rc.model.d_model = 32;
    rc.model.n_layers = 2;
    rc.model.n_heads = 2;
  } else if (a.size != "small") {
    fail("--size must be tiny or small (got " + a.size + ")");
  }
  if (a.layers != 0) rc.model.n_layers = a.layers;
  rc.model.train_len = a.train_len;
  rc.model.seed = a.seed;
  rc.schedule.peak_lr = a.lr;
  rc.schedule.total_steps = a.steps;
  rc.schedule.warmup_steps = a.steps / 20 > 0 ? a.steps / 20 : 1;
  rc.batch = a.batch;
  rc.data_seed = a.seed;
  rc.random_positions = a.random_positions;
  return rc;
}

// The jobs this process trains: every j < n_jobs, or with --shard K/N those with j mod N = K.
std::vector<std::size_t> jobs_of(const Args& a, std::size_t n_jobs) {
  std::vector<std::size_t> jobs;
  for (std::size_t j = 0; j < n_jobs; ++j)
    if (a.shard_count == 0 || j % a.shard_count == a.shard_index) jobs.push_back(j);
  return jobs;
}

// One job per (scheme, seed) of `jobs`, up to --jobs at once: results[i · seeds + k] is scheme i
// with seed S + k (the others stay empty). Returns the wall time in seconds.
double run_all(const Args& a, const Dataset& data, const RunConfig& rc, const std::vector<Scheme>& schemes,
               const std::vector<std::size_t>& jobs, std::vector<SchemeResult>* results) {
  const std::size_t n_seeds = a.seeds, n_jobs = schemes.size() * n_seeds;
  results->assign(n_jobs, SchemeResult{});
  std::vector<Status> statuses(n_jobs);
  std::mutex print;
  struct Ctx {
    std::string name;
    std::mutex* print;
    std::size_t every;
  };
  auto run_job = [&](std::size_t j) {
    const Scheme scheme = schemes[j / n_seeds];
    RunConfig job = rc;
    job.model.seed = job.data_seed = a.seed + j % n_seeds;
    Ctx ctx{scheme_name(scheme) + (n_seeds > 1 ? " s" + std::to_string(job.model.seed) : std::string()), &print,
            a.steps / 10 > 0 ? a.steps / 10 : 1};
    statuses[j] = run_scheme(
        data, job, scheme, &(*results)[j],
        [](void* user, std::size_t step, std::size_t total, float loss) {
          const Ctx& c = *static_cast<Ctx*>(user);
          if ((step + 1) % c.every == 0 || step + 1 == total) {
            std::lock_guard<std::mutex> lock(*c.print);
            std::fprintf(stderr, "  %-16s step %5zu/%zu  loss %.4f\n", c.name.c_str(), step + 1, total, loss);
          }
          return true;
        },
        &ctx);
  };
  const auto start = std::chrono::steady_clock::now();
  run_jobs(jobs.size(), a.jobs, [&](std::size_t i) { run_job(jobs[i]); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t j : jobs) check(statuses[j], scheme_name(schemes[j / n_seeds]));
  return seconds;
}

// One label's row of the table (and its min–max row with more than one seed): per length the mean
// loss over the seeds of runs[0 … n_seeds), and loss(4T) / loss(T) taken per seed.
void print_row(const std::string& l, const SchemeResult* runs, std::size_t n_seeds, std::size_t T,
               const std::size_t (&lengths)[5], int w, double steps_per_s, const std::string& clipped) {
  // cells[c][k]: column c (the lengths, then the ratio) of seed k; NaN for no number.
  std::vector<std::vector<double>> cells(6, std::vector<double>(n_seeds, NAN));
  bool no_emb[6] = {}, missing[6] = {};
  for (std::size_t k = 0; k < n_seeds; ++k) {
    double at_t = NAN, at_4t = NAN;
    for (std::size_t c = 0; c < 5; ++c) {
      const std::size_t L = lengths[c];
      const EvalRow* found = nullptr;
      for (const EvalRow& e : runs[k].eval)
        if (e.length == L && label(runs[k], e) == l) found = &e;
      if (found == nullptr && L <= T)  // scaled rope rows exist only beyond T: the plain row applies
        for (const EvalRow& e : runs[k].eval)
          if (e.length == L && e.scaling == RopeScaling::kNone) found = &e;
      missing[c] = found == nullptr;
      no_emb[c] = found != nullptr && found->no_embedding;
      if (found != nullptr && !found->no_embedding) cells[c][k] = found->loss;
      if (found && L == T) at_t = found->loss;
      if (found && L == 4 * T) at_4t = found->no_embedding ? NAN : found->loss;
    }
    cells[5][k] = at_4t / at_t;
    no_emb[5] = !std::isfinite(cells[5][k]);
  }
  std::string lo_hi;
  std::printf("%-16s", l.c_str());
  for (std::size_t c = 0; c < 6; ++c) {
    const int prec = c == 5 ? 3 : 4;
    double mean = 0.0, lo = INFINITY, hi = -INFINITY;
    for (double v : cells[c]) {
      mean += v / static_cast<double>(n_seeds);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    char buf[64];
    if (missing[c]) std::snprintf(buf, sizeof buf, "-");
    else if (no_emb[c]) std::snprintf(buf, sizeof buf, "no emb.");
    else std::snprintf(buf, sizeof buf, "%.*f", prec, mean);
    std::printf(" %*s", w, buf);
    if (!missing[c] && !no_emb[c]) std::snprintf(buf, sizeof buf, "%.*f–%.*f", prec - 1, lo, prec - 1, hi);
    else buf[0] = '\0';
    char cell[80];
    std::snprintf(cell, sizeof cell, " %*s", w + 2, buf);  // "–" is 3 bytes, 1 column
    lo_hi += cell;
  }
  std::printf(" %9.1f %9s\n", steps_per_s, clipped.c_str());
  if (n_seeds > 1) std::printf("%-16s%s\n", "  min–max", lo_hi.c_str());
}

// The table: per label and length the mean loss over the seeds, below it min–max (with more than
// one seed); loss(4T) / loss(T) taken per seed.
void print_table(const Args& a, const Dataset& data, const RunConfig& rc, const std::vector<Scheme>& schemes,
                 const std::vector<SchemeResult>& results) {
  const std::size_t n_seeds = a.seeds;
  const std::size_t T = rc.model.train_len;
  const std::size_t lengths[] = {T / 2, T, 2 * T, 4 * T, 8 * T};
  const int w = n_seeds > 1 ? 13 : 9;
  std::printf("\n%-16s", "loss (nats)");
  for (std::size_t L : lengths) std::printf(" %*s", w, ("L=" + std::to_string(L)).c_str());
  std::printf(" %*s %9s %9s\n", w, "L4T/LT", "steps/s", "clipped");
  if (std::isfinite(data.loss_floor(T))) {
    std::printf("%-16s", "floor");
    for (std::size_t L : lengths) std::printf(" %*.4f", w, data.loss_floor(L));
    std::printf("\n");
  }
  for (std::size_t i = 0; i < schemes.size(); ++i) {
    const SchemeResult* runs = &results[i * n_seeds];
    std::vector<std::string> labels;
    for (const EvalRow& e : runs[0].eval) {
      const std::string l = label(runs[0], e);
      bool seen = false;
      for (const auto& x : labels) seen = seen || x == l;
      if (!seen) labels.push_back(l);
    }
    double steps_per_s = 0.0;
    std::size_t clip_lo = SIZE_MAX, clip_hi = 0;
    for (std::size_t k = 0; k < n_seeds; ++k) {
      steps_per_s +=
          static_cast<double>(runs[k].train_loss.size()) / runs[k].train_seconds / static_cast<double>(n_seeds);
      clip_lo = std::min(clip_lo, runs[k].clipped_steps);
      clip_hi = std::max(clip_hi, runs[k].clipped_steps);
    }
    const std::string clipped =
        clip_lo == clip_hi ? std::to_string(clip_lo) : std::to_string(clip_lo) + "–" + std::to_string(clip_hi);
    for (const std::string& l : labels) print_row(l, runs, n_seeds, T, lengths, w, steps_per_s, clipped);
  }
}

// One job's result as the JSON holds it: every seed's evaluation; the training curve and the
// trained position parameters of each scheme's first seed only, so that a 5-seed run stays small
// enough to ship and to diff.
json job_json(const Args& a, std::size_t job, const SchemeResult& r) {
  const bool first_seed = job % a.seeds == 0;
  json jr = {
      {"scheme", scheme_name(r.scheme)}, {"seed", a.seed + job % a.seeds},
      {"trainSeconds", r.train_seconds}, {"stepsPerSecond", static_cast<double>(r.train_loss.size()) / r.train_seconds},
      {"clippedSteps", r.clipped_steps}, {"eval", json::array()}};
  if (first_seed) jr["trainLoss"] = float_array(r.train_loss);
  for (const EvalRow& e : r.eval) {
    json b = json::array();
    for (double v : e.bucket_loss) b.push_back(number_or_null(v));
    jr["eval"].push_back({{"length", e.length},
                          {"ropeScaling", rope_scaling_name(e.scaling)},
                          {"noEmbedding", e.no_embedding},
                          {"loss", number_or_null(e.loss)},
                          {"floor", number_or_null(e.floor)},
                          {"bucketWidth", e.bucket_width},
                          {"bucketLoss", b}});
  }
  if (first_seed) {
    jr["position"] = json::object();
    for (const PositionArray& p : r.position)
      jr["position"][p.name] = {{"shape", p.shape}, {"values", float_array(p.values)}};
  }
  return jr;
}

// The run as JSON into --out: `jobs` in order. A shard's file also says which shard it is, its
// sweep's job count and, per result, its job index (what --merge checks and sorts by).
void write_json(const Args& a, const Dataset& data, const RunConfig& rc, const std::vector<std::size_t>& jobs,
                std::size_t n_jobs, const std::vector<SchemeResult>& results) {
  json j;
  j["date"] = utc_now();
  j["command"] = a.shard_count == 0 ? recorded_command(a) : a.command;
  j["simd"] = simd_arch();
  j["task"] = a.task;
  j["config"] = config_json(a, data, rc);
  j["entropyRate"] = number_or_null(data.entropy_rate());
  if (a.shard_count != 0) j["shard"] = {{"index", a.shard_index}, {"count", a.shard_count}, {"jobs", n_jobs}};
  j["results"] = json::array();
  for (std::size_t job : jobs) {
    json jr = job_json(a, job, results[job]);
    if (a.shard_count != 0) jr["job"] = job;
    j["results"].push_back(std::move(jr));
  }
  write_file(j, a.out);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (!a.merge.empty()) return merge_main(a);
  std::vector<std::uint8_t> text;
  const std::unique_ptr<Dataset> data = load_dataset(a, &text);
  if (a.threads > 64) fail("--threads must be in [1, 64]");
  check(set_num_threads(static_cast<int>(a.threads)), "--threads");
  const RunConfig rc = run_config(a);
  Footprint size;  // the model's rules (model.cpp), said before any training
  check(footprint(rc.model, rc.batch, rc.model.train_len, &size), "the model (--size, --layers, --train-len, --batch)");
  const std::vector<Scheme> schemes = parse_schemes(a.extend != 0 && a.schemes == "all" ? "rope,xpos" : a.schemes);

  std::printf(
      "lab: task %s (vocab %zu), d_model %zu, n_layers %zu, n_heads %zu, train_len %zu, batch %zu, "
      "%zu steps, peak lr %g, simd %s, %d thread%s per model\n",
      a.task.c_str(), data->vocab_size(), rc.model.d_model, rc.model.n_layers, rc.model.n_heads, rc.model.train_len,
      rc.batch, a.steps, a.lr, simd_arch(), num_threads(), num_threads() == 1 ? "" : "s");
  if (rc.random_positions != 0)
    std::printf("lab: randomized positions: each training row at a sorted random subset of [0, %zu)\n",
                rc.random_positions);
  if (std::isfinite(data->entropy_rate()))
    std::printf("lab: entropy rate %.4f nats/token; floor at train_len %.4f\n", data->entropy_rate(),
                data->loss_floor(rc.model.train_len));
  if (a.extend != 0) {
    if (a.shard_count != 0) fail("--shard splits a training sweep; --extend runs whole");
    return extend_main(a, *data, rc, schemes);
  }

  const std::size_t n_jobs = schemes.size() * a.seeds;
  const std::vector<std::size_t> jobs = jobs_of(a, n_jobs);
  std::vector<SchemeResult> results;
  const double seconds = run_all(a, *data, rc, schemes, jobs, &results);
  if (a.shard_count == 0) {
    print_table(a, *data, rc, schemes, results);
    std::printf("\nlab: %zu scheme(s) × %zu seed(s) in %.1f s wall\n", schemes.size(), a.seeds, seconds);
  } else {
    std::printf("\nlab: shard %zu/%zu: %zu of the %zu jobs in %.1f s wall\n", a.shard_index, a.shard_count, jobs.size(),
                n_jobs, seconds);
  }
  write_json(a, *data, rc, jobs, n_jobs, results);
  return 0;
}
