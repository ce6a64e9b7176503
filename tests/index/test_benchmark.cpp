// Hidden benchmark (not run by ctest): HNSW build time with FAISS's default
// IndexHNSWFlat storage vs winnow's vectorised storage, recall against flat,
// and single-query latency. Run with
//   OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE ./bin/test_index "[.bench]"
// Sizes: WINNOW_BENCH_N (20000), WINNOW_BENCH_D (128), WINNOW_BENCH_M (32),
// WINNOW_BENCH_CLUSTERS (100), WINNOW_BENCH_LATENT (32; 0 = isotropic noise
// around the cluster centres, a much harder case for HNSW).
#include <catch2/catch.hpp>

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>

#include "index_test_helpers.h"
#include "kernels/simd_distance.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/index/hnsw_vector_index.h"

using namespace winnow::index;
using namespace winnow::index::test;

namespace {

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10)) : fallback;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double recall_at(const std::vector<faiss::Index::idx_t>& approx, std::size_t ka,
                 const SearchResults& exact, std::size_t k, const std::vector<std::int64_t>& ids) {
  double hits = 0;
  for (std::size_t q = 0; q < exact.num_queries; ++q) {
    std::set<std::int64_t> truth;
    for (std::size_t r = 0; r < k; ++r) {
      truth.insert(exact.id(q, r));
    }
    for (std::size_t r = 0; r < k; ++r) {
      const auto internal = approx[q * ka + r];
      if (internal >= 0) {
        hits += truth.count(ids[static_cast<std::size_t>(internal)]);
      }
    }
  }
  return hits / static_cast<double>(exact.num_queries * k);
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

TEST_CASE("benchmark: HNSW build and search, FAISS default vs winnow storage", "[.bench]") {
  const std::size_t n = env_size("WINNOW_BENCH_N", 20000);
  const std::size_t d = env_size("WINNOW_BENCH_D", 128);
  const int m = static_cast<int>(env_size("WINNOW_BENCH_M", 32));
  const std::size_t nq = 500;
  const std::size_t clusters = env_size("WINNOW_BENCH_CLUSTERS", 100);
  const std::size_t latent = env_size("WINNOW_BENCH_LATENT", 32);
  const Dataset data = clustered_dataset(n, nq, d, clusters, 31, latent);
  const std::vector<float>& base = data.base;
  const std::vector<float>& queries = data.queries;
  const std::vector<std::int64_t> ids = sequential_ids(n);
  std::printf(
      "n=%zu d=%zu M=%d efConstruction=40 clusters=%zu latent=%zu threads=%d kernel=%s "
      "load=%s\n",
      n, d, m, clusters, latent, omp_get_max_threads(), inner_product_isa(),
      load_average().c_str());

  FlatVectorIndex flat(d);
  auto t0 = std::chrono::steady_clock::now();
  flat.add(ids, base);
  std::printf("flat add: %.3f s\n", seconds_since(t0));
  t0 = std::chrono::steady_clock::now();
  const SearchResults exact = flat.search(queries, 10);
  std::printf("flat batch search (%zu queries, BLAS): %.3f ms/query\n", nq,
              1e3 * seconds_since(t0) / static_cast<double>(nq));

  faiss::IndexHNSWFlat stock(static_cast<int>(d), m, faiss::METRIC_INNER_PRODUCT);
  stock.hnsw.efConstruction = 40;
  t0 = std::chrono::steady_clock::now();
  stock.add(static_cast<faiss::Index::idx_t>(n), base.data());
  const double stock_build = seconds_since(t0);

  HnswVectorIndex ours(d, HnswParams{m, 40, 64});
  t0 = std::chrono::steady_clock::now();
  ours.add(ids, base);
  const double ours_build = seconds_since(t0);
  std::printf(
      "HNSW build: FAISS default storage %.2f s (%.0f vec/s), winnow storage %.2f s "
      "(%.0f vec/s), speed-up %.2fx\n",
      stock_build, static_cast<double>(n) / stock_build, ours_build,
      static_cast<double>(n) / ours_build, stock_build / ours_build);

  for (const int ef : {16, 64, 128}) {
    ours.set_ef_search(ef);
    stock.hnsw.efSearch = ef;
    // Single queries, one at a time.
    t0 = std::chrono::steady_clock::now();
    SearchResults single;
    single.num_queries = nq;
    single.k = 10;
    for (std::size_t q = 0; q < nq; ++q) {
      const SearchResults r = ours.search(1, queries.data() + q * d, 10);
      single.ids.insert(single.ids.end(), r.ids.begin(), r.ids.end());
    }
    const double ours_single = 1e3 * seconds_since(t0) / static_cast<double>(nq);
    std::vector<float> dist(nq * 10);
    std::vector<faiss::Index::idx_t> lab(nq * 10);
    t0 = std::chrono::steady_clock::now();
    for (std::size_t q = 0; q < nq; ++q) {
      stock.search(1, queries.data() + q * d, 10, dist.data() + q * 10, lab.data() + q * 10);
    }
    const double stock_single = 1e3 * seconds_since(t0) / static_cast<double>(nq);
    std::printf(
        "efSearch=%3d  winnow: R@1 %.3f R@10 %.3f, %.3f ms/query | FAISS default: R@1 "
        "%.3f R@10 %.3f, %.3f ms/query\n",
        ef, recall(single, exact, 1), recall(single, exact, 10), ours_single,
        recall_at(lab, 10, exact, 1, ids), recall_at(lab, 10, exact, 10, ids), stock_single);
  }

  // Flat single queries: winnow's vectorised scan vs FAISS's scalar path.
  const std::size_t nq_flat = 100;
  t0 = std::chrono::steady_clock::now();
  for (std::size_t q = 0; q < nq_flat; ++q) {
    (void)flat.search(1, queries.data() + q * d, 10);
  }
  const double ours_flat = 1e3 * seconds_since(t0) / static_cast<double>(nq_flat);
  faiss::IndexFlatIP stock_flat(static_cast<faiss::Index::idx_t>(d));
  const std::vector<float> unit = normalized(base, d);
  stock_flat.add(static_cast<faiss::Index::idx_t>(n), unit.data());
  std::vector<float> dist(10);
  std::vector<faiss::Index::idx_t> lab(10);
  t0 = std::chrono::steady_clock::now();
  for (std::size_t q = 0; q < nq_flat; ++q) {
    stock_flat.search(1, queries.data() + q * d, 10, dist.data(), lab.data());
  }
  const double stock_flat_ms = 1e3 * seconds_since(t0) / static_cast<double>(nq_flat);
  std::printf("flat single query: winnow %.3f ms, FAISS IndexFlatIP %.3f ms\n", ours_flat,
              stock_flat_ms);
  std::printf("load after: %s\n", load_average().c_str());
  CHECK(ours_build > 0.0);
}
