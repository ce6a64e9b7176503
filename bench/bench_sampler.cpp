// bench_sampler: cost of winnow's pruning core on synthetic losses.
//
// Measures, on one thread, for N samples over E epochs:
//   plan_ms_per_epoch      median time to build a pruned epoch's plan
//   update_ns_per_sample   median cost of recording one loss (checks + write)
//   *_cpu_*                the same in thread CPU time, which time slices
//                          lost to other processes on a shared machine do not inflate
//   weight_ns_per_sample   median cost of looking up one loss weight
//   bytes_per_sample       per-sample state kept between epochs
//   plan_bytes_per_entry   transient size of the plan per planned sample
//   peak_rss_mb            peak resident memory of the whole process
//   huge_pages_mb          of it, on transparent huge pages at the end (0: all 4 KB pages)
//   memory                 with --memory-probe: copy GB/s of one core, random-read ns
//
//   bench_sampler --n 10000000 --epochs 5 --policy infobatch --json out.json
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "winnow/pruning/dynamic_pruner.h"
#include "winnow/version.h"

namespace {

using namespace winnow::bench;

// A skewed, loss-like value for (id, epoch): most samples small, a long tail,
// drifting down with the epoch as training would.
float synthetic_loss(std::uint64_t id, std::uint64_t epoch) {
  std::uint64_t x = id * 0x9E3779B97F4A7C15ULL + epoch * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 29;
  const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
  return static_cast<float>(-std::log1p(-u) / (1.0 + 0.2 * static_cast<double>(epoch)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark winnow's pruning core on synthetic losses"};
  app.set_version_flag("--version", std::string("bench_sampler ") + winnow::kVersion);
  std::uint64_t n = 1'000'000;
  std::uint64_t epochs = 5;
  std::uint64_t batch = 1024;
  std::string policy = "infobatch";
  std::string json_path;
  app.add_option("--n", n, "number of samples")->check(CLI::PositiveNumber);
  app.add_option("--epochs", epochs, "epochs to run (epoch 0 is the warm-up)")
      ->check(CLI::Range(2, 1000000));
  app.add_option("--batch", batch, "samples per update call")->check(CLI::PositiveNumber);
  app.add_option("--policy", policy, "policy spec, e.g. infobatch or uniform(keep=0.5)");
  app.add_option("--json", json_path, "write the results to this file as JSON");
  bool memory_probe = false;
  app.add_flag("--memory-probe", memory_probe,
               "also measure one core's copy bandwidth and random-read latency (about 2 s)");
  CLI11_PARSE(app, argc, argv);

  try {
    // A large num_epochs keeps every measured epoch before annealing.
    winnow::DynamicPruner pruner(n, epochs * 10, policy, 1);
    std::vector<double> plan_ms;
    std::vector<double> plan_cpu_ms;
    std::vector<double> update_ns;
    std::vector<double> update_cpu_ns;
    std::vector<double> weight_ns;
    std::vector<float> losses(batch);
    std::vector<float> weights(batch);
    std::uint64_t planned_total = 0;
    std::uint64_t plan_bytes = 0;

    for (std::uint64_t e = 0; e < epochs; ++e) {
      const auto plan_start = Clock::now();
      const double plan_cpu_start = thread_cpu_seconds();
      const long faults_start = thread_minor_faults();
      const winnow::EpochPlan& plan = pruner.begin_epoch();
      const long plan_faults = thread_minor_faults() - faults_start;
      const double plan_seconds = seconds_since(plan_start);
      const double plan_cpu_seconds = thread_cpu_seconds() - plan_cpu_start;
      if (e > 0) {
        plan_ms.push_back(plan_seconds * 1e3);
        plan_cpu_ms.push_back(plan_cpu_seconds * 1e3);
        planned_total += plan.size();
        plan_bytes = std::max<std::uint64_t>(
            plan_bytes, plan.ids.capacity() * 8 + plan.weight_codes.capacity());
      }
      double update_seconds = 0.0;
      double update_cpu_seconds = 0.0;
      double weight_seconds = 0.0;
      std::uint64_t samples = 0;
      while (auto b = pruner.next_batch(batch)) {
        for (std::size_t i = 0; i < b->size; ++i) losses[i] = synthetic_loss(b->ids[i], e);
        const auto w_start = Clock::now();
        pruner.weights(b->ids, b->size, weights.data());
        weight_seconds += seconds_since(w_start);
        const double u_cpu_start = thread_cpu_seconds();
        const auto u_start = Clock::now();
        pruner.update(b->ids, losses.data(), b->size);
        update_seconds += seconds_since(u_start);
        update_cpu_seconds += thread_cpu_seconds() - u_cpu_start;
        samples += b->size;
      }
      update_ns.push_back(update_seconds * 1e9 / static_cast<double>(samples));
      update_cpu_ns.push_back(update_cpu_seconds * 1e9 / static_cast<double>(samples));
      weight_ns.push_back(weight_seconds * 1e9 / static_cast<double>(samples));
      std::cerr << "epoch " << e << ": " << samples << " samples, plan " << plan_seconds * 1e3
                << " ms (cpu " << plan_cpu_seconds * 1e3 << " ms, " << plan_faults
                << " page faults), update " << update_ns.back() << " ns/sample\n";
    }

    const winnow::RunStats totals = pruner.totals();
    nlohmann::json out = {
        {"n", n},
        {"epochs", epochs},
        {"policy", pruner.policy_spec()},
        {"batch", batch},
        {"plan_ms_per_epoch", median(plan_ms)},
        {"plan_ms_all", plan_ms},
        {"plan_cpu_ms_per_epoch", median(plan_cpu_ms)},
        {"update_ns_per_sample", median(update_ns)},
        {"update_cpu_ns_per_sample", median(update_cpu_ns)},
        {"weight_ns_per_sample", median(weight_ns)},
        {"bytes_per_sample", static_cast<double>(pruner.state_bytes()) / static_cast<double>(n)},
        {"plan_bytes_per_entry", planned_total == 0 ? 0.0
                                                    : static_cast<double>(plan_bytes) /
                                                          (static_cast<double>(planned_total) /
                                                           static_cast<double>(epochs - 1))},
        {"mean_planned_fraction",
         static_cast<double>(planned_total) / static_cast<double>(n * (epochs - 1))},
        {"saved_fraction", totals.saved_fraction()},
        {"peak_rss_mb", peak_rss_mb()},
        {"huge_pages_mb", huge_pages_mb()},
        {"load_average_1min", load_average()},
    };
    if (memory_probe) out["memory"] = memory_probe_json();
    return emit(out, json_path);
  } catch (const std::exception& e) {
    std::cerr << "bench_sampler: " << e.what() << "\n";
    return 1;
  }
}
