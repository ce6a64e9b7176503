// bench_hnsw_recall: how much of exact search an approximate index (HNSW or
// IVF) keeps, for the two searches the ingest makes (issue 16): near-duplicate
// candidates (k = candidates = 10) and the label vote's neighbours (k =
// label_k = 15).
//
// The base is a seeded Gaussian mixture of unit vectors (`clusters` centres,
// within-cluster noise `spread`, as bench/ingest_growth.py), added in
// micro-batches of 256 as the pipeline adds them. Queries are new samples of
// the mixture and, for the near-duplicate measure, copies of stored vectors
// with noise (--copy-noise per coordinate). New samples are searched in calls
// of --query-batch queries (the ingest's micro-batch), which is what the time
// per query measures. Recall@k = |approximate top-k ∩ exact top-k| / k,
// averaged; copy recall = share of copies whose original is in its top-k. Exact
// search is the flat index.
//
//   bench_hnsw_recall --n 100000 --configs "hnsw(M=16,efConstruction=40,efSearch=64)"
//   bench_hnsw_recall --n 1000000 --dim 128 --copy-noise 0.05 --configs ivf "ivf(nprobe=8)"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/clock.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/version.h"

#include "bench_support.h"

namespace {

using winnow::index::SearchResults;
using winnow::index::VectorIndex;

struct Mixture {
  std::size_t dim;
  std::vector<float> centres;
  double spread;
  std::mt19937_64 rng;

  Mixture(std::size_t d, std::size_t clusters, double s, std::uint64_t seed)
      : dim(d), centres(clusters * d), spread(s), rng(seed) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& c : centres) c = normal(rng);
  }

  // `n` samples, row-major.
  std::vector<float> draw(std::size_t n) {
    std::normal_distribution<float> noise(0.0f, static_cast<float>(spread));
    std::uniform_int_distribution<std::size_t> pick(0, centres.size() / dim - 1);
    std::vector<float> out(n * dim);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t c = pick(rng);
      for (std::size_t j = 0; j < dim; ++j) out[i * dim + j] = centres[c * dim + j] + noise(rng);
    }
    return out;
  }
};

// Mean |a ∩ b| / k over the queries, rows of k ids.
double recall(const SearchResults& approx, const SearchResults& exact, std::size_t k) {
  double sum = 0.0;
  for (std::size_t q = 0; q < exact.num_queries; ++q) {
    std::set<std::int64_t> truth;
    for (std::size_t r = 0; r < k; ++r) truth.insert(exact.id(q, r));
    std::size_t hit = 0;
    for (std::size_t r = 0; r < k; ++r) hit += truth.count(approx.id(q, r));
    sum += static_cast<double>(hit) / static_cast<double>(k);
  }
  return sum / static_cast<double>(exact.num_queries);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HNSW recall against exact search, for near-duplicate candidates and label votes"};
  app.set_version_flag("--version", std::string("bench_hnsw_recall ") + winnow::kVersion);
  std::size_t n = 100000, dim = 64, clusters = 20, queries = 2000, copies = 1000;
  double spread = 0.35;
  std::uint64_t seed = 1;
  double copy_noise = 0.01;
  std::size_t query_batch = 256;
  std::vector<std::string> configs = {"hnsw(M=16,efConstruction=40,efSearch=64)"};
  std::string json_path;
  app.add_option("--n", n, "vectors in the index")->capture_default_str();
  app.add_option("--dim", dim)->capture_default_str();
  app.add_option("--clusters", clusters)->capture_default_str();
  app.add_option("--spread", spread, "within-cluster noise per coordinate")->capture_default_str();
  app.add_option("--queries", queries, "new samples searched")->capture_default_str();
  app.add_option("--copies", copies, "noisy copies of stored vectors searched")
      ->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  app.add_option("--copy-noise", copy_noise, "noise per coordinate of the near copies")
      ->capture_default_str();
  app.add_option("--query-batch", query_batch,
                 "queries per search call, timed (256: the ingest's micro-batch)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--configs", configs, "index configs (hnsw, ivf) to compare with flat");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  Mixture mixture(dim, clusters, spread, seed);
  const std::vector<float> base = mixture.draw(n);
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int64_t>(i);
  const std::vector<float> fresh = mixture.draw(queries);
  std::vector<float> copy_queries(copies * dim);
  std::vector<std::int64_t> originals(copies);
  {
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    std::normal_distribution<float> noise(0.0f, static_cast<float>(copy_noise));
    for (std::size_t c = 0; c < copies; ++c) {
      originals[c] = static_cast<std::int64_t>(pick(mixture.rng));
      for (std::size_t j = 0; j < dim; ++j) {
        copy_queries[c * dim + j] =
            base[static_cast<std::size_t>(originals[c]) * dim + j] + noise(mixture.rng);
      }
    }
  }

  const auto build = [&](const std::string& config, double& seconds) {
    std::unique_ptr<VectorIndex> index = winnow::index::make_vector_index(config, dim);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < n; at += 256) {
      const std::size_t m = std::min<std::size_t>(256, n - at);
      index->add(m, ids.data() + at, base.data() + at * dim);
    }
    seconds = winnow::seconds_since(t0);
    return index;
  };
  double flat_seconds = 0.0;
  const std::unique_ptr<VectorIndex> flat = build("flat", flat_seconds);
  const SearchResults exact_fresh = flat->search(fresh, 15);
  const SearchResults exact_copies = flat->search(copy_queries, 10);

  nlohmann::json out = {{"n", n},
                        {"dim", dim},
                        {"clusters", clusters},
                        {"spread", spread},
                        {"queries", queries},
                        {"copies", copies},
                        {"copy_noise", copy_noise},
                        {"query_batch", query_batch},
                        {"seed", seed},
                        {"load_average", winnow::bench::load_average()}};
  double exact_copy_hits = 0;
  for (std::size_t c = 0; c < copies; ++c) {
    for (std::size_t r = 0; r < 10; ++r) exact_copy_hits += exact_copies.id(c, r) == originals[c];
  }
  out["flat"] = {{"copy_recall_at_10", exact_copy_hits / static_cast<double>(copies)}};
  for (const std::string& config : configs) {
    double seconds = 0.0;
    const std::unique_ptr<VectorIndex> hnsw = build(config, seconds);
    const auto t0 = std::chrono::steady_clock::now();
    SearchResults approx_fresh;  // searched in calls of query_batch, as the ingest does
    approx_fresh.k = 15;
    for (std::size_t first = 0; first < queries; first += query_batch) {
      const std::size_t count = std::min(query_batch, queries - first);
      approx_fresh.append(hnsw->search(count, fresh.data() + first * dim, 15));
    }
    const double search_seconds = winnow::seconds_since(t0);
    const SearchResults approx_copies = hnsw->search(copy_queries, 10);
    double copy_hits = 0;
    for (std::size_t c = 0; c < copies; ++c) {
      for (std::size_t r = 0; r < 10; ++r) copy_hits += approx_copies.id(c, r) == originals[c];
    }
    // Label votes (k = 15) and near-duplicate candidates (the first 10) of new samples.
    out["configs"].push_back(
        {{"config", hnsw->config()},
         {"build_seconds", seconds},
         {"search_us_per_query", 1e6 * search_seconds / static_cast<double>(queries)},
         {"recall_at_15_label_vote", recall(approx_fresh, exact_fresh, 15)},
         {"recall_at_10_candidates", recall(approx_fresh, exact_fresh, 10)},
         {"recall_at_10_copies", recall(approx_copies, exact_copies, 10)},
         {"copy_original_found_at_10", copy_hits / static_cast<double>(copies)}});
  }
  return winnow::bench::emit(out, json_path);
}
