#include <catch2/catch.hpp>

#include <initializer_list>
#include <set>

#include "index_test_helpers.h"
#include "winnow/error.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::index;
using namespace winnow::index::test;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kDim = 32;

// Adds `n` rows of `base` from row `first` in micro-batches of 256.
void add_in_batches(VectorIndex& index, const std::vector<float>& base,
                    const std::vector<std::int64_t>& ids, std::size_t first, std::size_t n) {
  for (std::size_t b = first; b < first + n; b += 256) {
    const std::size_t count = std::min<std::size_t>(256, first + n - b);
    index.add(count, ids.data() + b, base.data() + b * kDim);
  }
}

// Near copies of 300 stored vectors (rows of `base`), each noise strength in
// turn: `approx` finds the original first at least 98% as often as `exact`.
void check_near_copies(const VectorIndex& approx, const VectorIndex& exact,
                       const std::vector<float>& base, const std::vector<std::int64_t>& ids,
                       std::uint32_t seed, std::initializer_list<float> noises) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const float noise : noises) {
    INFO("noise " << noise);
    std::vector<float> copies;
    std::vector<std::int64_t> originals;
    for (std::size_t c = 0; c < 300; ++c) {
      const std::size_t row = (c * 7919) % ids.size();
      originals.push_back(ids[row]);
      for (std::size_t j = 0; j < kDim; ++j) {
        copies.push_back(base[row * kDim + j] + noise * normal(rng));
      }
    }
    const SearchResults exact_found = exact.search(copies, 1);
    const SearchResults approx_found = approx.search(copies, 1);
    std::size_t by_exact = 0, by_approx = 0;
    for (std::size_t c = 0; c < originals.size(); ++c) {
      by_exact += exact_found.id(c, 0) == originals[c];
      by_approx += approx_found.id(c, 0) == originals[c];
    }
    CHECK(by_approx >= by_exact * 98 / 100);
  }
}

}  // namespace

TEST_CASE("IVF stays one exact cell while small", "[ivf]") {
  const Dataset data = clustered_dataset(kMinCellSplit, 40, kDim, 8, 3);
  const std::vector<std::int64_t> ids = sequential_ids(kMinCellSplit, 1000, 3);
  IvfVectorIndex ivf(kDim, IvfParams{1, 100});
  FlatVectorIndex flat(kDim);
  ivf.add(ids, data.base);
  flat.add(ids, data.base);
  CHECK(ivf.cells() == 1);
  CHECK(ivf.search(data.queries, 10).ids == flat.search(data.queries, 10).ids);
}

TEST_CASE("IVF splits cells as it grows, like sqrt(n), and keeps near copies", "[ivf]") {
  const std::size_t n = 20000;
  const Dataset data = clustered_dataset(n, 300, kDim, 20, 7);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1);
  IvfVectorIndex ivf(kDim);  // the defaults
  FlatVectorIndex flat(kDim);
  add_in_batches(ivf, data.base, ids, 0, n);
  flat.add(ids, data.base);

  // Every cell at most the split threshold, and their number of the order
  // n / threshold (cells hold between half and all of it after a split).
  const std::size_t threshold = ivf.split_threshold(n);
  CHECK(threshold == kMinCellSplit);  // sqrt(20000) < 256
  CHECK(ivf.cells() >= n / threshold);
  CHECK(ivf.cells() <= 4 * n / threshold);
  CHECK(ivf.size() == n);

  // Near copies of stored vectors (noise of several strengths) find their
  // original first, as exact search does.
  check_near_copies(ivf, flat, data.base, ids, 5, {0.005f, 0.02f, 0.05f});

  // New samples: most of the exact top-10 with the default nprobe, all of it
  // when every cell is scanned.
  const SearchResults exact = flat.search(data.queries, 10);
  CHECK(recall(ivf.search(data.queries, 10), exact, 10) > 0.9);
  IvfParams every_cell = ivf.params();
  every_cell.nprobe = static_cast<int>(ivf.cells());
  ivf.set_search_params(every_cell);
  const SearchResults all_cells = ivf.search(data.queries, 10);
  CHECK(recall(all_cells, exact, 10) == 1.0);
}

TEST_CASE("IVF results depend on the order of adds, not on how queries are batched", "[ivf]") {
  const std::size_t n = 6000;
  const Dataset data = clustered_dataset(n, 64, kDim, 10, 9);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1);
  IvfVectorIndex a(kDim, IvfParams{3, 100}), b(kDim, IvfParams{3, 100});
  add_in_batches(a, data.base, ids, 0, n);
  add_in_batches(b, data.base, ids, 0, n);
  REQUIRE(a.cells() > 4);
  CHECK(a.cells() == b.cells());
  const SearchResults whole = a.search(data.queries, 10);
  CHECK(b.search(data.queries, 10).ids == whole.ids);
  // Query by query, as the ingest's threads split a batch.
  for (std::size_t q = 0; q < 64; ++q) {
    const SearchResults one = a.search(1, data.queries.data() + q * kDim, 10);
    for (std::size_t r = 0; r < 10; ++r) CHECK(one.id(0, r) == whole.id(q, r));
  }
}

TEST_CASE("IVF skips removed vectors, and compact drops them without changing results", "[ivf]") {
  const std::size_t n = 3000;
  const Dataset data = clustered_dataset(n, 50, kDim, 10, 13);
  const std::vector<std::int64_t> ids = sequential_ids(n, 7, 2);
  IvfVectorIndex ivf(kDim, IvfParams{4, 100});
  add_in_batches(ivf, data.base, ids, 0, n);
  std::vector<std::int64_t> removed;
  for (std::size_t i = 0; i < n; i += 3) removed.push_back(ids[i]);
  REQUIRE(ivf.remove(removed) == removed.size());
  CHECK(ivf.tombstones() == removed.size());
  const SearchResults before = ivf.search(data.queries, 10);
  const std::set<std::int64_t> gone(removed.begin(), removed.end());
  for (const std::int64_t id : before.ids) CHECK(gone.count(id) == 0);

  const std::size_t cells = ivf.cells();
  ivf.compact();
  CHECK(ivf.tombstones() == 0);
  CHECK(ivf.size() == n - removed.size());
  CHECK(ivf.cells() == cells);
  CHECK(ivf.search(data.queries, 10).ids == before.ids);
  // A removed id can come back; the index goes on growing after compact.
  ivf.add(1, &removed[0], data.base.data());
  CHECK(ivf.contains(removed[0]));
  CHECK(ivf.search(1, data.base.data(), 1).id(0, 0) == removed[0]);
}

TEST_CASE("IVF cells of identical vectors are not split over and over", "[ivf]") {
  const std::size_t n = 2 * kMinCellSplit;
  std::vector<float> same(n * kDim, 0.0f);
  for (std::size_t i = 0; i < n; ++i) same[i * kDim] = 1.0f;
  IvfVectorIndex ivf(kDim);
  ivf.add(sequential_ids(n, 1), same);
  CHECK(ivf.cells() == 1);
  CHECK(ivf.search(1, same.data(), 5).count(0) == 5);
}

TEST_CASE("IVF configs parse, and bad ones say what is wrong", "[ivf][factory]") {
  CHECK(canonical_vector_index_config("ivf") == "ivf(nprobe=16,cellScale=100,cellCap=256)");
  CHECK(canonical_vector_index_config(" ivf( nprobe = 4 ) ") ==
        "ivf(nprobe=4,cellScale=100,cellCap=256)");
  CHECK(canonical_vector_index_config("ivf(cellCap=0)") ==
        "ivf(nprobe=16,cellScale=100,cellCap=0)");
  // Stored by a winnow from before cellCap: cells without a cap, as then.
  CHECK(canonical_vector_index_config("ivf(nprobe=16,cellScale=100)") ==
        "ivf(nprobe=16,cellScale=100,cellCap=0)");
  auto index = make_vector_index("ivf(cellScale=50,cellCap=512)", 8);
  CHECK(index->type() == "ivf");
  CHECK(index->per_query_results());
  CHECK(index->config() == "ivf(nprobe=16,cellScale=50,cellCap=512)");
  CHECK_THROWS_WITH(make_vector_index("ivf(cellCap=8)", 8), Contains("cellCap must be 0"));
  CHECK_THROWS_WITH(make_vector_index("ivf(cellCap=-1)", 8), Contains("cellCap"));
  CHECK_THROWS_WITH(make_vector_index("ivf(nprobe=0)", 8), Contains("not a positive integer"));
  CHECK_THROWS_WITH(make_vector_index("ivf(nlist=9)", 8), Contains("unknown key 'nlist'"));
  CHECK_THROWS_WITH(make_vector_index("ivf(nprobe=99999999)", 8), Contains("nprobe must be in"));
  CHECK_THROWS_WITH(make_vector_index("annoy", 8), Contains("'flat', 'hnsw', 'ivf' or 'auto'"));
}

TEST_CASE("IVF asks for many queries per search call from sharedScanFrom vectors",
          "[ivf][factory]") {
  CHECK(canonical_vector_index_config("ivf(sharedScanFrom=131072)") ==
        "ivf(nprobe=16,cellScale=100,cellCap=256)");  // the default is not named
  CHECK(canonical_vector_index_config("ivf(sharedScanFrom=3)") ==
        "ivf(nprobe=16,cellScale=100,cellCap=256,sharedScanFrom=3)");
  CHECK_THROWS_WITH(make_vector_index("ivf(sharedScanFrom=0)", 8),
                    Contains("not a positive integer"));
  auto index = make_vector_index("ivf(sharedScanFrom=3)", 2);
  CHECK(index->queries_per_search() == 1);
  index->add({1, 2}, {1.0f, 0.0f, 0.0f, 1.0f});
  CHECK(index->queries_per_search() == 1);
  index->add({3}, {1.0f, 1.0f});
  CHECK(index->queries_per_search() == kSharedScanQueries);
  CHECK(make_vector_index("ivf", 2)->queries_per_search() == 1);
  CHECK(make_vector_index("hnsw", 2)->queries_per_search() == 1);
}

// kMinCellCap keeps the cells small enough that a test of a few seconds
// reaches kDirectoryFrom cells, where the cells are chosen through groups of
// centroids.
TEST_CASE("IVF with a cell cap keeps cells small, groups them, and keeps near copies", "[ivf]") {
  const std::size_t n = 24000;
  const Dataset data = clustered_dataset(n, 200, kDim, 20, 17);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1);
  IvfParams params;
  params.cell_cap = kMinCellCap;
  IvfVectorIndex ivf(kDim, params);
  FlatVectorIndex flat(kDim);
  add_in_batches(ivf, data.base, ids, 0, n);
  flat.add(ids, data.base);
  CHECK(ivf.split_threshold(n) == static_cast<std::size_t>(kMinCellCap));
  REQUIRE(ivf.cells() >= kDirectoryFrom);
  CHECK(ivf.cells() >= n / kMinCellCap);

  // A near copy of a stored vector finds its original first, as exact search does.
  check_near_copies(ivf, flat, data.base, ids, 23, {0.005f, 0.02f});
  // New samples: a good share of the exact top-10 (cells of at most 16 of
  // 24,000 vectors, 16 of them scanned), and each query's result does not
  // depend on the queries beside it.
  const SearchResults whole = ivf.search(data.queries, 10);
  CHECK(recall(whole, flat.search(data.queries, 10), 10) > 0.5);
  for (std::size_t q = 0; q < 20; ++q) {
    const SearchResults one = ivf.search(1, data.queries.data() + q * kDim, 10);
    for (std::size_t r = 0; r < 10; ++r) CHECK(one.id(0, r) == whole.id(q, r));
  }
}
