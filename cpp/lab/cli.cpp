// npm run lab -- [--task markov|copy|flipflop|text] [--text PATH] [--schemes all|rope,alibi,...] [--steps N]
//   [--size tiny|small] [--train-len T] [--batch B] [--lr PEAK] [--seed S] [--jobs J] [--out FILE]
// Trains the lab model once per scheme on the same data (one thread per scheme, up to --jobs),
// evaluates each at train_len × {1/2, 1, 2, 4, 8}, prints the table and writes JSON (--out,
// default build/lab-results.json). Results depend only on the arguments (not on --jobs).
#include <chrono>
#include <cmath>
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

#include "posenc/lab.hpp"
#include "posenc/posenc.hpp"

namespace {

using namespace posenc;
using namespace posenc::lab;
using nlohmann::json;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "lab: %s\n", message.c_str());
  std::exit(2);
}

void check(const Status& s, const char* what) {
  if (!s.ok()) fail(std::string(what) + ": " + s.message);
}

std::size_t parse_size(const char* flag, const char* v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || n == 0) fail(std::string(flag) + " must be a positive integer (got " + v + ")");
  return static_cast<std::size_t>(n);
}

struct Args {
  std::string task = "markov", text_path, schemes = "all", size = "small", out = "build/lab-results.json";
  std::size_t steps = 2000, train_len = 64, batch = 16, jobs = 0;
  double lr = 1e-2;
  std::uint64_t seed = 1;
  std::string command;
};

Args parse(int argc, char** argv) {
  Args a;
  a.command = "npm run lab --";
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--help" || f == "-h") {
      std::printf("usage: npm run lab -- [--task markov|copy|flipflop|text] [--text PATH] [--schemes all|a,b,...]\n"
                  "  [--steps N] [--size tiny|small] [--train-len T] [--batch B] [--lr PEAK] [--seed S]\n"
                  "  [--jobs J] [--out FILE]\n");
      std::exit(0);
    }
    if (i + 1 >= argc) fail(f + " needs a value");
    const char* v = argv[++i];
    a.command += " " + f + " " + v;
    if (f == "--task") a.task = v;
    else if (f == "--text") a.text_path = v;
    else if (f == "--schemes") a.schemes = v;
    else if (f == "--steps") a.steps = parse_size("--steps", v);
    else if (f == "--size") a.size = v;
    else if (f == "--train-len") a.train_len = parse_size("--train-len", v);
    else if (f == "--batch") a.batch = parse_size("--batch", v);
    else if (f == "--jobs") a.jobs = parse_size("--jobs", v);
    else if (f == "--seed") a.seed = parse_size("--seed", v);
    else if (f == "--out") a.out = v;
    else if (f == "--lr") {
      char* end = nullptr;
      a.lr = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(a.lr > 0.0 && std::isfinite(a.lr))) fail(std::string("--lr must be > 0 (got ") + v + ")");
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

std::string label(const SchemeResult& r, const EvalRow& e) {
  std::string s = scheme_name(r.scheme);
  if (e.scaling != RopeScaling::kNone) s += "+" + std::string(rope_scaling_name(e.scaling));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  DatasetConfig dc;
  check(parse_task(a.task.c_str(), &dc.task), "--task");
  dc.seed = a.seed;
  std::vector<std::uint8_t> text;
  if (dc.task == Task::kText) {
    if (a.text_path.empty()) fail("--task text needs --text PATH");
    std::ifstream in(a.text_path, std::ios::binary);
    if (!in) fail("cannot read " + a.text_path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    dc.text = text.data();
    dc.text_len = text.size();
  }
  std::unique_ptr<Dataset> data;
  check(Dataset::create(dc, &data), "dataset");

  RunConfig rc;
  if (a.size == "tiny") {
    rc.model.d_model = 32;
    rc.model.n_layers = 2;
    rc.model.n_heads = 2;
  } else if (a.size != "small") {
    fail("--size must be tiny or small (got " + a.size + ")");
  }
  rc.model.train_len = a.train_len;
  rc.model.seed = a.seed;
  rc.schedule.peak_lr = a.lr;
  rc.schedule.total_steps = a.steps;
  rc.schedule.warmup_steps = a.steps / 20 > 0 ? a.steps / 20 : 1;
  rc.batch = a.batch;
  rc.data_seed = a.seed;
  const std::vector<Scheme> schemes = parse_schemes(a.schemes);

  std::printf("lab: task %s (vocab %zu), d_model %zu, n_layers %zu, n_heads %zu, train_len %zu, batch %zu, "
              "%zu steps, peak lr %g, simd %s\n",
              a.task.c_str(), data->vocab_size(), rc.model.d_model, rc.model.n_layers, rc.model.n_heads,
              rc.model.train_len, rc.batch, a.steps, a.lr, simd_arch());
  if (std::isfinite(data->entropy_rate()))
    std::printf("lab: entropy rate %.4f nats/token; floor at train_len %.4f\n", data->entropy_rate(),
                data->loss_floor(rc.model.train_len));

  std::vector<SchemeResult> results(schemes.size());
  std::vector<Status> statuses(schemes.size());
  std::mutex print;
  struct Ctx { const char* name; std::mutex* print; std::size_t every; };
  auto worker = [&](std::size_t i) {
    Ctx ctx{scheme_name(schemes[i]), &print, a.steps / 10 > 0 ? a.steps / 10 : 1};
    statuses[i] = run_scheme(*data, rc, schemes[i], &results[i],
        [](void* user, std::size_t step, std::size_t total, float loss) {
          const Ctx& c = *static_cast<Ctx*>(user);
          if ((step + 1) % c.every == 0 || step + 1 == total) {
            std::lock_guard<std::mutex> lock(*c.print);
            std::fprintf(stderr, "  %-10s step %5zu/%zu  loss %.4f\n", c.name, step + 1, total, loss);
          }
          return true;
        }, &ctx);
  };
  std::size_t jobs = a.jobs != 0 ? a.jobs : std::thread::hardware_concurrency();
  if (jobs == 0) jobs = 1;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < schemes.size(); first += jobs) {
    std::vector<std::thread> threads;
    for (std::size_t i = first; i < schemes.size() && i < first + jobs; ++i) threads.emplace_back(worker, i);
    for (auto& t : threads) t.join();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t i = 0; i < schemes.size(); ++i) check(statuses[i], scheme_name(schemes[i]));

  // The table: mean loss per evaluation length, and loss(4T) / loss(T).
  const std::size_t T = rc.model.train_len;
  const std::size_t lengths[] = {T / 2, T, 2 * T, 4 * T, 8 * T};
  std::printf("\n%-16s", "loss (nats)");
  for (std::size_t L : lengths) std::printf(" %9s", ("L=" + std::to_string(L)).c_str());
  std::printf(" %10s %9s %8s\n", "L4T/LT", "steps/s", "clipped");
  if (std::isfinite(data->loss_floor(T))) {
    std::printf("%-16s", "floor");
    for (std::size_t L : lengths) std::printf(" %9.4f", data->loss_floor(L));
    std::printf("\n");
  }
  for (const SchemeResult& r : results) {
    std::vector<std::string> labels;
    for (const EvalRow& e : r.eval) {
      const std::string l = label(r, e);
      bool seen = false;
      for (const auto& x : labels) seen = seen || x == l;
      if (!seen) labels.push_back(l);
    }
    for (const std::string& l : labels) {
      std::printf("%-16s", l.c_str());
      double at_t = NAN, at_4t = NAN;
      for (std::size_t L : lengths) {
        const EvalRow* found = nullptr;
        for (const EvalRow& e : r.eval)
          if (e.length == L && label(r, e) == l) found = &e;
        if (found == nullptr && L <= T)  // scaled rope rows exist only beyond T: the plain row applies
          for (const EvalRow& e : r.eval)
            if (e.length == L && e.scaling == RopeScaling::kNone) found = &e;
        if (found == nullptr) std::printf(" %9s", "-");
        else if (found->no_embedding) std::printf(" %9s", "no emb.");
        else std::printf(" %9.4f", found->loss);
        if (found && L == T) at_t = found->loss;
        if (found && L == 4 * T) at_4t = found->no_embedding ? NAN : found->loss;
      }
      if (std::isfinite(at_4t)) std::printf(" %10.3f", at_4t / at_t);
      else std::printf(" %10s", "no emb.");
      std::printf(" %9.1f %8zu\n", static_cast<double>(r.train_loss.size()) / r.train_seconds, r.clipped_steps);
    }
  }
  std::printf("\nlab: %zu scheme(s) in %.1f s wall\n", results.size(), seconds);

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  json j;
  j["date"] = date;
  j["command"] = a.command;
  j["simd"] = simd_arch();
  j["task"] = a.task;
  j["config"] = {{"vocabSize", data->vocab_size()}, {"dModel", rc.model.d_model}, {"nLayers", rc.model.n_layers},
                 {"nHeads", rc.model.n_heads}, {"trainLength", T}, {"batch", rc.batch}, {"steps", a.steps},
                 {"peakLr", a.lr}, {"warmupSteps", rc.schedule.warmup_steps}, {"seed", a.seed},
                 {"evalBatch", rc.eval_batch}};
  j["entropyRate"] = number_or_null(data->entropy_rate());
  j["results"] = json::array();
  for (const SchemeResult& r : results) {
    json jr = {{"scheme", scheme_name(r.scheme)}, {"trainSeconds", r.train_seconds},
               {"stepsPerSecond", static_cast<double>(r.train_loss.size()) / r.train_seconds},
               {"clippedSteps", r.clipped_steps}, {"trainLoss", r.train_loss}, {"eval", json::array()}};
    for (const EvalRow& e : r.eval) {
      json b = json::array();
      for (double v : e.bucket_loss) b.push_back(number_or_null(v));
      jr["eval"].push_back({{"length", e.length}, {"ropeScaling", rope_scaling_name(e.scaling)},
                            {"noEmbedding", e.no_embedding}, {"loss", number_or_null(e.loss)},
                            {"floor", number_or_null(e.floor)}, {"bucketWidth", e.bucket_width},
                            {"bucketLoss", b}});
    }
    j["results"].push_back(jr);
  }
  std::ofstream out(a.out);
  if (!out) fail("cannot write " + a.out);
  out << j.dump(1) << "\n";
  std::printf("lab: wrote %s\n", a.out.c_str());
  return 0;
}
