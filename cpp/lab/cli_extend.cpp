// npm run lab -- --extend FACTOR: context extension by fine-tuning (lab.hpp run_extension), per
// scheme (rope and xpos by default) and seed, on the jobs of the main run; a table of the loss at
// L = FACTOR · train_len and at 2·L after N fine-tuning steps per scaling (mean, min–max over the
// seeds below it) and the JSON (--out).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "cli.hpp"
#include "posenc/posenc.hpp"

namespace posenc::lab::cli {

int extend_main(const Args& a, const Dataset& data, const RunConfig& rc, const std::vector<Scheme>& schemes) {
  ExtendConfig ex;
  ex.factor = a.extend;
  if (!a.checkpoints.empty()) ex.checkpoints = a.checkpoints;
  const std::size_t T = rc.model.train_len, L = ex.factor * T, n_seeds = a.seeds, n_jobs = schemes.size() * n_seeds;
  std::printf(
      "lab: extend: fine-tune a copy at L = %zu (%zu × train_len) with each scaling (factor %zu) for up to %zu "
      "steps, batch %zu, lr %g; loss at L and 2L = %zu\n",
      L, ex.factor, ex.factor, ex.checkpoints.back(), std::max<std::size_t>(1, rc.batch / ex.factor),
      rc.schedule.peak_lr * rc.schedule.final_fraction, 2 * L);
  std::vector<ExtendResult> results(n_jobs);
  std::vector<Status> statuses(n_jobs);
  std::mutex print;
  const auto start = std::chrono::steady_clock::now();
  run_jobs(n_jobs, a.jobs, [&](std::size_t j) {
    RunConfig job = rc;
    job.model.seed = job.data_seed = a.seed + j % n_seeds;
    struct Ctx {
      std::string name;
      std::mutex* print;
    };
    Ctx ctx{std::string(scheme_name(schemes[j / n_seeds])) + " s" + std::to_string(job.model.seed), &print};
    statuses[j] = run_extension(
        data, job, schemes[j / n_seeds], ex, &results[j],
        [](void* user, std::size_t step, std::size_t total, float loss) {
          const Ctx& c = *static_cast<Ctx*>(user);
          if ((step + 1) % 200 == 0 || step + 1 == total) {
            std::lock_guard<std::mutex> lock(*c.print);
            std::fprintf(stderr, "  %-16s step %5zu/%zu  loss %.4f\n", c.name.c_str(), step + 1, total, loss);
          }
          return true;
        },
        &ctx);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t j = 0; j < n_jobs; ++j) check(statuses[j], scheme_name(schemes[j / n_seeds]));

  // Per (scheme, scaling) one line: the mean over the seeds at each checkpoint, at L then 2L.
  std::printf("\n%-16s", "loss (nats)");
  for (std::size_t len : {L, 2 * L})
    for (std::size_t n : ex.checkpoints)
      std::printf(" %13s", ("L" + std::to_string(len) + " N" + std::to_string(n)).c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < schemes.size(); ++i)
    for (RopeScaling sc : kExtendScalings) {
      std::printf("%-16s", (std::string(scheme_name(schemes[i])) + "+" + rope_scaling_name(sc)).c_str());
      std::string spread;
      for (std::size_t len : {L, 2 * L})
        for (std::size_t n : ex.checkpoints) {
          double mean = 0.0, lo = INFINITY, hi = -INFINITY;
          for (std::size_t k = 0; k < n_seeds; ++k)
            for (const ExtendRow& r : results[i * n_seeds + k].rows)
              if (r.scaling == sc && r.steps == n && r.length == len) {
                mean += r.loss / static_cast<double>(n_seeds);
                lo = std::min(lo, r.loss);
                hi = std::max(hi, r.loss);
              }
          std::printf(" %13.4f", mean);
          char range[48], cell[64];
          std::snprintf(range, sizeof range, "%.3f–%.3f", lo, hi);
          std::snprintf(cell, sizeof cell, " %15s", range);  // "–" is 3 bytes, 1 column
          spread += cell;
        }
      std::printf("\n");
      if (n_seeds > 1) std::printf("%-16s%s\n", "  min–max", spread.c_str());
    }
  std::printf("\nlab: extend: %zu scheme(s) × %zu seed(s) in %.1f s wall\n", schemes.size(), n_seeds, seconds);

  nlohmann::json j;
  j["date"] = utc_now();
  j["command"] = a.command;
  j["simd"] = simd_arch();
  j["task"] = a.task;
  j["config"] = config_json(a, data, rc);
  j["extend"] = {{"factor", ex.factor},
                 {"length", L},
                 {"checkpoints", ex.checkpoints},
                 {"batch", std::max<std::size_t>(1, rc.batch / ex.factor)},
                 {"lr", rc.schedule.peak_lr * rc.schedule.final_fraction}};
  j["floor"] = nlohmann::json::object();
  for (std::size_t len : {L, 2 * L}) {
    const double f = data.loss_floor(len);
    j["floor"][std::to_string(len)] = std::isfinite(f) ? nlohmann::json(f) : nlohmann::json(nullptr);
  }
  j["results"] = nlohmann::json::array();
  for (std::size_t job = 0; job < n_jobs; ++job) {
    const ExtendResult& r = results[job];
    nlohmann::json tune = nlohmann::json::object(), rows = nlohmann::json::array();
    for (std::size_t k = 0; k < std::size(kExtendScalings); ++k)
      tune[rope_scaling_name(kExtendScalings[k])] = r.tune_loss[k];
    for (const ExtendRow& row : r.rows)
      rows.push_back({{"ropeScaling", rope_scaling_name(row.scaling)},
                      {"steps", row.steps},
                      {"length", row.length},
                      {"loss", row.loss}});
    j["results"].push_back({{"scheme", scheme_name(r.scheme)},
                            {"seed", a.seed + job % n_seeds},
                            {"seconds", r.seconds},
                            {"trainLoss", r.train_loss},
                            {"tuneLoss", tune},
                            {"rows", rows}});
  }
  std::ofstream out(a.out);
  if (!out) fail("cannot write " + a.out);
  out << j.dump(1) << "\n";
  std::printf("lab: wrote %s\n", a.out.c_str());
  return 0;
}

}  // namespace posenc::lab::cli
