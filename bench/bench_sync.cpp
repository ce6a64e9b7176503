// bench_sync: the per-step cost of keeping score tables identical across
// data-parallel ranks (DistributedPrunedLoss), W ranks as W threads of this
// process over a c10d::FileStore and ProcessGroupGloo on loopback.
//
//   bench_sync --ranks 2,4 --batches 128,1024 --steps 300
//
// For each (ranks, batch) it times, per step and on rank 0:
//   gather_us: the three all-gathers alone (sizes int64[1], ids int64[B],
//              losses float32[B]);
//   step_us:   a whole DistributedPrunedLoss call (gathers, recording W*B
//              observations, the local weighted mean).
// Prints one JSON document. On a machine with fewer cores than ranks the
// numbers include oversubscription; see docs/distributed.md.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/torch/distributed_pruned_loss.h"

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

nlohmann::json measure(int world, std::int64_t batch, int steps, std::uint64_t samples,
                       const std::string& dir) {
  const std::string init = dir + "/bench_sync_" + std::to_string(world) + "_" +
                           std::to_string(batch) + "_" + std::to_string(::getpid());
  std::remove(init.c_str());
  std::vector<double> gather_us, step_us;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto group = winnow::make_gloo_group(init, world, rank);
      winnow::PrunerOptions o;
      o.num_samples = samples;
      o.num_epochs = 1000;
      o.policy = "infobatch";
      o.world_size = static_cast<std::uint64_t>(world);
      o.rank = static_cast<std::uint64_t>(rank);
      auto pruner = std::make_shared<winnow::DynamicPruner>(o);
      winnow::DistributedPrunedLoss loss(pruner, group);
      const auto ids = torch::randint(static_cast<std::int64_t>(samples), {batch}, torch::kLong);
      const auto losses = torch::rand({batch});
      const int warmup = 20;
      for (int s = 0; s < warmup + steps; ++s) {
        auto t0 = Clock::now();
        // The three collectives of a DistributedPrunedLoss step, alone.
        winnow::all_gather(*group, torch::full({1}, batch, torch::kLong));
        winnow::all_gather(*group, ids);
        winnow::all_gather(*group, losses);
        auto t1 = Clock::now();
        loss(losses, ids);
        auto t2 = Clock::now();
        if (rank == 0 && s >= warmup) {
          gather_us.push_back(micros(t0, t1));
          step_us.push_back(micros(t1, t2));
        }
      }
      group->barrier()->wait();
    });
  }
  for (auto& t : threads) t.join();
  std::remove(init.c_str());
  const Timing g = summarize(gather_us), s = summarize(step_us);
  return {{"ranks", world},
          {"batch", batch},
          {"steps", steps},
          {"bytes_sent_per_rank", 8 + 12 * batch},
          {"bytes_received_per_rank", world * (8 + 12 * batch)},
          {"gather_us", {{"median", g.median}, {"mean", g.mean}, {"p90", g.p90}}},
          {"step_us", {{"median", s.median}, {"mean", s.mean}, {"p90", s.p90}}}};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks{2, 4};
  std::vector<std::int64_t> batches{128, 1024};
  int steps = 300;
  std::uint64_t samples = 60000;
  std::string dir = "/tmp";
  CLI::App app{"Per-step cost of DistributedPrunedLoss's all-gathers (Gloo, loopback)"};
  app.add_option("--ranks", ranks, "world sizes")->delimiter(',');
  app.add_option("--batches", batches, "batch sizes per rank")->delimiter(',');
  app.add_option("--steps", steps, "timed steps per configuration");
  app.add_option("--samples", samples, "data set size");
  app.add_option("--dir", dir, "folder for the FileStore files");
  CLI11_PARSE(app, argc, argv);
  torch::set_num_threads(1);
  nlohmann::json results = nlohmann::json::array();
  for (int w : ranks) {
    for (auto b : batches) results.push_back(measure(w, b, steps, samples, dir));
  }
  nlohmann::json doc = {{"benchmark", "bench_sync"},
                        {"hardware_threads", std::thread::hardware_concurrency()},
                        {"results", results}};
  std::cout << doc.dump(2) << "\n";
  return 0;
}
