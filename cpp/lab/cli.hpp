// The lab's command line (cli.cpp: the options, the run of every scheme; cli_extend.cpp: --extend).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posenc/lab.hpp"

namespace posenc::lab::cli {

struct Args {
  std::string task = "markov", text_path, schemes = "all", size = "small", out = "build/lab-results.json";
  std::size_t steps = 2000, train_len = 64, batch = 16, jobs = 0, seeds = 3, random_positions = 0, extend = 0;
  std::size_t threads = 1;  // --threads: posenc's pool, which one model's steps split over
  std::size_t layers = 0;   // --layers: n_layers (0: the size's, 2)
  double lr = 1e-2;
  std::uint64_t seed = 1;
  std::vector<std::size_t> checkpoints;          // --checkpoints for --extend (empty: ExtendConfig's)
  std::size_t shard_index = 0, shard_count = 0;  // --shard K/N (0 shards: the whole sweep)
  std::vector<std::string> merge;                // --merge FILE,FILE,...: shard files to merge
  std::string command;  // "npm run lab -- " and the options, without --shard, --merge and --out
};

[[noreturn]] void fail(const std::string& message);  // "lab: message" on stderr, exit 2
void check(const Status& s, const char* what);       // fail(what: message) unless ok
// job(0 … n_jobs − 1) on up to `threads` threads (0: the cores), each index once.
void run_jobs(std::size_t n_jobs, std::size_t threads, const std::function<void(std::size_t)>& job);
std::string utc_now();  // 2026-12-02T05:30:00Z
// The JSON's "config": the model, schedule and seeds of a run.
nlohmann::json config_json(const Args& a, const Dataset& data, const RunConfig& rc);

// The command a run's JSON records: the options, then --out FILE.
std::string recorded_command(const Args& a);
// Writes j into --out (fails on an unwritable path) and says so.
void write_file(const nlohmann::json& j, const std::string& path);
// --merge: the shard files of one sweep (--shard K/N, every K once) into the JSON the whole sweep
// writes in one process, bit for bit but for its date and the shards' timings (cli_sweep.cpp).
int merge_main(const Args& a);

// --extend FACTOR: run_extension per scheme (rope, xpos) and seed; the table and the JSON.
int extend_main(const Args& a, const Dataset& data, const RunConfig& rc, const std::vector<Scheme>& schemes);

}  // namespace posenc::lab::cli
