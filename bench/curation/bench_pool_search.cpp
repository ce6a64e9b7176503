// bench_pool_search: the ingest's batched index search (search_on_pool) on a
// saved index file, as a long-lived ingest pays it per record: queries taken
// from a manifest's provided embeddings, searched in calls of --batch queries
// (the ingest's search block: 2,048 once an IVF index passes 2^17 vectors),
// on a pool of --threads threads. Reports wall and process-CPU microseconds
// per query, the median of --runs runs.
//
//   bench_pool_search --index growth.db.index --queries batch.jsonl --threads 2
#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "winnow/curation/dataset/pool_search.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index_io.h"

namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The provided embeddings of the first `limit` records of a manifest, read
// as the ingest reads them (an embedding of another length is a rejection).
std::vector<float> read_embeddings(const std::string& path, std::size_t dim, std::size_t limit) {
  winnow::curation::readers::ManifestReaderOptions options;
  options.expected_embedding_dim = dim;
  options.hash_content = false;
  std::vector<float> out;
  for (const auto& entry : winnow::curation::readers::read_manifest(path, options)) {
    if (out.size() == limit * dim) break;
    if (entry.ok() && !entry.record->embedding.empty()) {
      out.insert(out.end(), entry.record->embedding.begin(), entry.record->embedding.end());
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string index_path, queries_path, out_path;
  std::size_t limit = 40000, batch = winnow::index::kSharedScanQueries, k = 30;
  int threads = 1, runs = 3;
  CLI::App app("bench_pool_search");
  app.add_option("--index", index_path, "a saved index file")->required();
  app.add_option("--queries", queries_path, "JSONL manifest with provided embeddings")->required();
  app.add_option("--limit", limit, "queries taken");
  app.add_option("--batch", batch,
                 "queries per search call (default: the IVF's kSharedScanQueries)");
  app.add_option("--k", k, "neighbours per query");
  app.add_option("--threads", threads, "pool threads");
  app.add_option("--runs", runs, "runs (median reported)");
  app.add_option("--out", out_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  const auto loaded = winnow::index::load_vector_index(index_path);
  const winnow::index::VectorIndex& index = *loaded.index;
  const std::vector<float> queries = read_embeddings(queries_path, index.dim(), limit);
  const std::size_t n = queries.size() / index.dim();
  winnow::curation::ThreadPool pool(threads);
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = winnow::bench::Clock::now();
    const double c0 = process_cpu_seconds();
    for (std::size_t first = 0; first < n; first += batch) {
      const std::size_t count = std::min(batch, n - first);
      winnow::curation::search_on_pool(pool, index, count, queries.data() + first * index.dim(), k);
    }
    wall.push_back(std::chrono::duration<double>(winnow::bench::Clock::now() - t0).count());
    cpu.push_back(process_cpu_seconds() - c0);
  }
  const double per_query = 1e6 / static_cast<double>(n);
  const nlohmann::json out = {{"index", index.config()},
                              {"vectors", index.size()},
                              {"queries", n},
                              {"batch", batch},
                              {"k", k},
                              {"threads", threads},
                              {"wall_us_per_query", winnow::bench::median(wall) * per_query},
                              {"cpu_us_per_query", winnow::bench::median(cpu) * per_query},
                              {"load_average", winnow::bench::load_average()}};
  return winnow::bench::emit(out, out_path);
}
