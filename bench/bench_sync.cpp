// bench_sync: the per-step cost of keeping score tables identical across
// data-parallel ranks (DistributedPrunedLoss), over a c10d::FileStore and
// ProcessGroupGloo on loopback. Two ways to run the ranks:
//
//   bench_sync --ranks 2,4 --batches 128,1024 --steps 300
//       W ranks as W threads of this process, for each W in --ranks;
//   for r in 0 1; do taskset -c $r bench_sync --world-size 2 --rank $r --init /tmp/bs
//       --batches 128,1024 > rank$r.json & done; wait     (one shell line)
//       one rank per process (as in training), each pinned to its own core
//       by taskset; rank 0 prints the results. Remove --init's file first.
//
// For each (ranks, batch) it times, per step and on rank 0:
//   gather_us: the three all-gathers alone (sizes int64[1], ids int64[B],
//              losses float32[B]);
//   step_us:   a whole DistributedPrunedLoss call (gathers, recording W*B
//              observations, the local weighted mean).
// Prints one JSON document, with the load average (the machine is shared). On
// a machine with fewer cores than ranks the numbers include oversubscription;
// see docs/distributed.md.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "winnow/torch/distributed_pruned_loss.h"
#include "winnow/version.h"

namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Timing {
  double median = 0, mean = 0, p90 = 0;
};

Timing summarize(std::vector<double> v) {
  Timing t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  t.median = v[v.size() / 2];
  t.p90 = v[v.size() * 9 / 10];
  for (double x : v) t.mean += x;
  t.mean /= static_cast<double>(v.size());
  return t;
}

struct Settings {
  int steps = 300;
  std::uint64_t samples = 60000;
};

struct RankTimings {
  std::vector<double> gather_us, step_us;
};

// One rank's timed loop; every rank of `group` runs it with the same batch.
RankTimings time_rank(const c10::intrusive_ptr<c10d::ProcessGroup>& group, std::int64_t batch,
                      const Settings& settings) {
  winnow::PrunerOptions o;
  o.num_samples = settings.samples;
  o.num_epochs = 1000;
  o.policy = "infobatch";
  o.world_size = static_cast<std::uint64_t>(group->getSize());
  o.rank = static_cast<std::uint64_t>(group->getRank());
  auto pruner = std::make_shared<winnow::DynamicPruner>(o);
  winnow::DistributedPrunedLoss loss(pruner, group);
  const auto ids =
      torch::randint(static_cast<std::int64_t>(settings.samples), {batch}, torch::kLong);
  const auto losses = torch::rand({batch});
  const int warmup = 20;
  RankTimings out;
  for (int s = 0; s < warmup + settings.steps; ++s) {
    const auto t0 = Clock::now();
    // The three collectives of a DistributedPrunedLoss step, alone.
    winnow::all_gather(*group, torch::full({1}, batch, torch::kLong));
    winnow::all_gather(*group, ids);
    winnow::all_gather(*group, losses);
    const auto t1 = Clock::now();
    loss(losses, ids);
    const auto t2 = Clock::now();
    if (s >= warmup) {
      out.gather_us.push_back(micros(t0, t1));
      out.step_us.push_back(micros(t1, t2));
    }
  }
  group->barrier()->wait();
  return out;
}

nlohmann::json result(int world, std::int64_t batch, const Settings& settings,
                      const RankTimings& rank0, const std::string& ranks_as) {
  const Timing g = summarize(rank0.gather_us), s = summarize(rank0.step_us);
  return {{"ranks", world},
          {"ranks_as", ranks_as},
          {"batch", batch},
          {"steps", settings.steps},
          {"bytes_sent_per_rank", 8 + 12 * batch},
          {"bytes_received_per_rank", world * (8 + 12 * batch)},
          {"gather_us", {{"median", g.median}, {"mean", g.mean}, {"p90", g.p90}}},
          {"step_us", {{"median", s.median}, {"mean", s.mean}, {"p90", s.p90}}},
          {"load_average", winnow::bench::load_average()}};
}

// W ranks as W threads of this process.
nlohmann::json measure_threads(int world, std::int64_t batch, const Settings& settings,
                               const std::string& dir) {
  const std::string init = dir + "/bench_sync_" + std::to_string(world) + "_" +
                           std::to_string(batch) + "_" + std::to_string(::getpid());
  std::remove(init.c_str());
  RankTimings rank0;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto timings = time_rank(winnow::make_gloo_group(init, world, rank), batch, settings);
      if (rank == 0) rank0 = std::move(timings);
    });
  }
  for (auto& t : threads) t.join();
  std::remove(init.c_str());
  return result(world, batch, settings, rank0, "threads");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks{2, 4};
  std::vector<std::int64_t> batches{128, 1024};
  Settings settings;
  std::string dir = "/tmp";
  int world_size = 0;
  int rank = 0;
  std::string init;
  CLI::App app{"Per-step cost of DistributedPrunedLoss's all-gathers (Gloo, loopback)"};
  app.set_version_flag("--version", std::string("bench_sync ") + winnow::kVersion);
  app.add_option("--ranks", ranks, "world sizes (ranks as threads)")->delimiter(',');
  app.add_option("--batches", batches, "batch sizes per rank")->delimiter(',');
  app.add_option("--steps", settings.steps, "timed steps per configuration");
  app.add_option("--samples", settings.samples, "data set size");
  app.add_option("--dir", dir, "folder for the FileStore files (ranks as threads)");
  auto* world_option =
      app.add_option("--world-size", world_size, "one rank per process: the number of ranks");
  app.add_option("--rank", rank, "one rank per process: this process's rank")->needs(world_option);
  app.add_option("--init", init, "one rank per process: the FileStore path all ranks share")
      ->needs(world_option);
  CLI11_PARSE(app, argc, argv);
  torch::set_num_threads(1);

  nlohmann::json results = nlohmann::json::array();
  if (world_size > 0) {
    if (init.empty()) {
      std::cerr << "bench_sync: --world-size needs --init (a FileStore path every rank reaches)\n";
      return 2;
    }
    auto group = winnow::make_gloo_group(init, world_size, rank);
    for (auto b : batches) {
      const RankTimings timings = time_rank(group, b, settings);
      results.push_back(result(world_size, b, settings, timings, "processes"));
    }
    if (rank != 0) return 0;  // rank 0 reports
  } else {
    for (int w : ranks) {
      for (auto b : batches) results.push_back(measure_threads(w, b, settings, dir));
    }
  }
  nlohmann::json doc = {{"benchmark", "bench_sync"},
                        {"hardware_threads", std::thread::hardware_concurrency()},
                        {"results", results}};
  return winnow::bench::emit(doc, "");
}
