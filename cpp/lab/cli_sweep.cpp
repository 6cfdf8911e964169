// npm run lab -- --merge SHARD,SHARD,... --out FILE: the shard files of one sweep (each written by
// the same command with --shard K/N, K = 0 … N − 1) into the JSON that command writes without
// --shard. Training is deterministic given the options and the SIMD target, so the merged file equals
// the one-process run's bit for bit but for "date" and the timings ("trainSeconds",
// "stepsPerSecond"). Refused: a file that is not a shard, shards of different sweeps or SIMD targets,
// a shard missing or given twice, a job missing, twice or in the wrong shard.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.hpp"

namespace posenc::lab::cli {
namespace {

using nlohmann::json;

// The fields every shard of one sweep holds alike, and what the merged file keeps of them.
constexpr const char* kSweepFields[] = {"command", "simd", "task", "config", "entropyRate"};

json read_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("--merge: cannot read " + path);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail("--merge: " + path + " is not JSON");
  const json* s = j.contains("shard") ? &j["shard"] : nullptr;
  if (s == nullptr || !(*s)["index"].is_number_unsigned() || !(*s)["count"].is_number_unsigned() ||
      !(*s)["jobs"].is_number_unsigned() || !j["results"].is_array())
    fail("--merge: " + path + " is not a shard file (written with --shard K/N)");
  for (const char* f : kSweepFields)
    if (!j.contains(f)) fail("--merge: " + path + " has no \"" + std::string(f) + "\"");
  return j;
}

void check_same_sweep(const json& first, const json& j, const std::string& first_path, const std::string& path) {
  for (const char* f : kSweepFields)
    if (first[f] != j[f])
      fail("--merge: " + path + " and " + first_path + " are not shards of one sweep: their \"" + f + "\" differ (" +
           j[f].dump() + " vs " + first[f].dump() + ")");
  if (first["shard"]["count"] != j["shard"]["count"] || first["shard"]["jobs"] != j["shard"]["jobs"])
    fail("--merge: " + path + " and " + first_path + " split different sweeps (shard count or job count differ)");
}

}  // namespace

int merge_main(const Args& a) {
  if (a.command != "npm run lab --") fail("--merge takes only the shard files and --out");
  std::vector<json> shards;
  for (const std::string& path : a.merge) {
    shards.push_back(read_shard(path));
    check_same_sweep(shards.front(), shards.back(), a.merge.front(), path);
  }
  const std::size_t n_shards = shards.front()["shard"]["count"], n_jobs = shards.front()["shard"]["jobs"];
  if (shards.size() != n_shards)
    fail("--merge: the sweep was split into " + std::to_string(n_shards) + " shards; " + std::to_string(shards.size()) +
         " given");
  std::vector<const json*> by_job(n_jobs, nullptr);
  std::vector<bool> seen(n_shards, false);
  for (std::size_t f = 0; f < shards.size(); ++f) {
    const std::size_t k = shards[f]["shard"]["index"];
    if (k >= n_shards || seen[k]) fail("--merge: shard " + std::to_string(k) + " given twice or out of range");
    seen[k] = true;
    for (const json& r : shards[f]["results"]) {
      const bool numbered = r.contains("job") && r["job"].is_number_unsigned();
      const std::size_t job = numbered ? r["job"].get<std::size_t>() : n_jobs;
      if (job >= n_jobs || job % n_shards != k || by_job[job] != nullptr)
        fail("--merge: " + a.merge[f] + " holds job " + r.value("job", json()).dump() + ", not one of shard " +
             std::to_string(k) + "'s or given twice");
      by_job[job] = &r;
    }
  }
  json out;
  for (const char* f : kSweepFields) out[f] = shards.front()[f];
  out["command"] = out["command"].get<std::string>() + " --out " + a.out;
  out["date"] = utc_now();
  out["results"] = json::array();
  for (std::size_t job = 0; job < n_jobs; ++job) {
    if (by_job[job] == nullptr) fail("--merge: job " + std::to_string(job) + " is in no shard file");
    json r = *by_job[job];
    r.erase("job");
    out["results"].push_back(std::move(r));
  }
  std::printf("lab: merged %zu jobs from %zu shards\n", n_jobs, n_shards);
  write_file(out, a.out);
  return 0;
}

}  // namespace posenc::lab::cli
