// bench_flat_search: the exact flat search kernels (index/src/kernels/flat_block_search.h)
// on random L2-normalised vectors, one thread.
//
// For each dimension, a base of n rows is searched with `queries` queries in
// calls of `chunk` queries (the ingest pipeline searches its micro-batch of
// 256 records for max(candidates, label_k, 4) = 15 neighbours; `winnow
// rejudge` searches 1024 stored samples at a time for label_k + 1 = 16).
// Kernels are interleaved within each run, so that a noisy neighbour slows
// them alike. Per kernel and dimension it reports the median wall and
// thread-CPU seconds over the runs and GMAC/s (n * d * queries
// multiply-adds per CPU second), and how many result slots differ from the
// first kernel's beyond float rounding.
//
//   bench_flat_search --n 55000 --dims 65,128,256 --queries 2048 --chunk 256 --k 15 --runs 3
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/version.h"

#include "bench_support.h"
#include "kernels/flat_block_search.h"

namespace {

using namespace winnow::bench;
using winnow::index::detail::FlatSearchKernel;

std::vector<float> unit_vectors(std::size_t n, std::size_t d, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> out(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    double norm2 = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      out[i * d + j] = normal(rng);
      norm2 += static_cast<double>(out[i * d + j]) * out[i * d + j];
    }
    const auto inv = static_cast<float>(1.0 / std::sqrt(norm2));
    for (std::size_t j = 0; j < d; ++j) out[i * d + j] *= inv;
  }
  return out;
}

struct Result {
  std::vector<float> scores;
  std::vector<std::int64_t> labels;
};

// Slots where `b` names another row than `a` and the scores differ by more
// than float rounding (equal scores may come in either order).
std::size_t differing_slots(const Result& a, const Result& b) {
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.labels.size(); ++i) {
    if (a.labels[i] != b.labels[i] && std::abs(a.scores[i] - b.scores[i]) > 1e-5f) ++differing;
  }
  return differing;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark winnow's exact flat search kernels"};
  app.set_version_flag("--version", std::string("bench_flat_search ") + winnow::kVersion);
  std::size_t n = 55000;
  std::vector<std::size_t> dims{65, 128, 256};
  std::size_t num_queries = 2048;
  std::size_t chunk = 256;
  std::size_t k = 15;
  int runs = 3;
  std::vector<std::string> kernel_names{"fused_avx512", "sgemm"};
  std::string json_path;
  app.add_option("--n", n, "base rows")->check(CLI::PositiveNumber);
  app.add_option("--dims", dims, "dimensions")->delimiter(',');
  app.add_option("--queries", num_queries, "queries per run")->check(CLI::PositiveNumber);
  app.add_option("--chunk", chunk, "queries per search call")->check(CLI::PositiveNumber);
  app.add_option("--k", k, "neighbours per query")->check(CLI::PositiveNumber);
  app.add_option("--runs", runs, "runs (the median is reported)")->check(CLI::Range(1, 100));
  app.add_option("--kernels", kernel_names, "kernels to compare")->delimiter(',');
  app.add_option("--json", json_path, "write the results to this file as JSON");
  CLI11_PARSE(app, argc, argv);

  const std::map<std::string, FlatSearchKernel> known{
      {"fused_avx512", FlatSearchKernel::fused_avx512}, {"sgemm", FlatSearchKernel::sgemm}};
  std::vector<FlatSearchKernel> kernels;
  for (const std::string& name : kernel_names) {
    const auto it = known.find(name);
    if (it == known.end()) {
      std::cerr << "unknown kernel " << name << "\n";
      return 2;
    }
    if (it->second != FlatSearchKernel::sgemm && !winnow::index::detail::fused_avx512_available()) {
      std::cerr << "skipping " << name << ": this CPU has no AVX-512F\n";
      continue;
    }
    kernels.push_back(it->second);
  }

  nlohmann::json out{{"benchmark", "flat_search"},
                     {"n", n},
                     {"queries", num_queries},
                     {"chunk", chunk},
                     {"k", k},
                     {"runs", runs},
                     {"load_before", load_average()},
                     {"results", nlohmann::json::array()}};
  for (const std::size_t d : dims) {
    const std::vector<float> base = unit_vectors(n, d, 1);
    const std::vector<float> queries = unit_vectors(num_queries, d, 2);
    std::vector<std::vector<double>> wall(kernels.size()), cpu(kernels.size());
    std::vector<Result> results(kernels.size());
    for (int run = 0; run < runs; ++run) {
      for (std::size_t i = 0; i < kernels.size(); ++i) {
        Result& res = results[i];
        res.scores.assign(num_queries * k, 0.0f);
        res.labels.assign(num_queries * k, 0);
        const auto t0 = Clock::now();
        const double c0 = thread_cpu_seconds();
        for (std::size_t q0 = 0; q0 < num_queries; q0 += chunk) {
          const std::size_t nq = std::min(chunk, num_queries - q0);
          winnow::index::detail::flat_block_search(base.data(), n, d, queries.data() + q0 * d, nq,
                                                   k, res.scores.data() + q0 * k,
                                                   res.labels.data() + q0 * k, kernels[i]);
        }
        cpu[i].push_back(thread_cpu_seconds() - c0);
        wall[i].push_back(seconds_since(t0));
      }
    }
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const double macs =
          static_cast<double>(n) * static_cast<double>(d) * static_cast<double>(num_queries);
      out["results"].push_back(
          {{"d", d},
           {"kernel", kernel_names[i]},
           {"wall_s", median(wall[i])},
           {"cpu_s", median(cpu[i])},
           {"gmac_per_cpu_s", macs / median(cpu[i]) * 1e-9},
           {"slots_differing_from_first", differing_slots(results[0], results[i])}});
    }
  }
  out["load_after"] = load_average();
  return emit(out, json_path);
}
