// search_on_pool: a batch of queries split across the pool's threads, grouped
// by the index's locality keys, gives each query the results one call on
// one thread gives it (and the cells it scanned), in the callers' order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "winnow/curation/dataset/pool_search.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index_factory.h"

namespace {

using winnow::curation::search_on_pool;
using winnow::curation::ThreadPool;

std::vector<float> gaussian(std::size_t n, std::size_t dim, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (float& x : v) x = normal(rng);
  return v;
}

// An index of `config` holding n Gaussian vectors (seed `seed`) under ids 10 i + 3.
std::unique_ptr<winnow::index::VectorIndex> index_of(const std::string& config, std::size_t n,
                                                     std::size_t dim, unsigned seed) {
  auto index = winnow::index::make_vector_index(config, dim);
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int64_t>(10 * i + 3);
  index->add(ids, gaussian(n, dim, seed));
  return index;
}

}  // namespace

TEST_CASE("search_on_pool gives every query the results of one call on one thread",
          "[ingest][search]") {
  constexpr std::size_t kDim = 16;
  constexpr std::size_t kK = 7;
  // Few cells (keys: the nearest cell), and past kDirectoryFrom cells (keys:
  // the nearest group of cells).
  const std::size_t sizes[] = {3000, 24000};
  for (const std::size_t n : sizes) {
    INFO(n << " vectors");
    const auto index = index_of("ivf(cellCap=16)", n, kDim, 1);
    const auto& ivf = dynamic_cast<const winnow::index::IvfVectorIndex&>(*index);
    if (n > 10000) REQUIRE(ivf.cells() >= winnow::index::kDirectoryFrom);

    constexpr std::size_t kQueries = 501;
    const std::vector<float> queries = gaussian(kQueries, kDim, 2);
    const std::vector<std::uint32_t> keys = index->locality_keys(kQueries, queries.data());
    REQUIRE(keys.size() == kQueries);
    CHECK(std::count(keys.begin(), keys.end(), keys.front()) < 400);  // more than one part

    const winnow::index::SearchResults one = index->search(kQueries, queries.data(), kK);
    REQUIRE(one.probes_per_query == 16);
    for (const int threads : {1, 2, 3}) {
      INFO(threads << " threads");
      ThreadPool pool(threads);
      const winnow::index::SearchResults split =
          search_on_pool(pool, *index, kQueries, queries.data(), kK);
      REQUIRE(split.num_queries == kQueries);
      REQUIRE(split.k == kK);
      CHECK(split.ids == one.ids);
      CHECK(std::memcmp(split.similarities.data(), one.similarities.data(),
                        one.similarities.size() * sizeof(float)) == 0);
      CHECK(split.probes_per_query == one.probes_per_query);
      CHECK(split.probes == one.probes);  // the cells each query scanned
    }
  }
}

TEST_CASE("an IVF's locality key of a query does not depend on its length", "[ingest][search]") {
  constexpr std::size_t kDim = 8;
  const auto index = index_of("ivf(cellCap=16)", 2000, kDim, 3);
  std::vector<float> queries = gaussian(50, kDim, 4);
  const std::vector<std::uint32_t> keys = index->locality_keys(50, queries.data());
  for (float& x : queries) x *= 3.5f;
  CHECK(index->locality_keys(50, queries.data()) == keys);
  const auto flat = index_of("flat", 2000, kDim, 3);
  CHECK(flat->locality_keys(50, queries.data()).empty());  // a flat index has no parts
}

// A flat index with its AVX-512 kernel scores every (query, row) pair with one
// FMA chain whatever the batch, so its searches split too, in calls of at
// least min_queries_per_call (fewer take another kernel, whose rounding
// differs). Without that kernel (BLAS sgemm) it is searched in one call.
TEST_CASE("search_on_pool splits a flat index only where every part rounds as the whole",
          "[ingest][search]") {
  constexpr std::size_t kDim = 24;
  constexpr std::size_t kK = 9;
  for (const std::string config : {"flat", "auto"}) {
    INFO(config);
    const auto index = index_of(config, 5000, kDim, 3);
    REQUIRE(index->type() == "flat");
    CHECK(index->min_queries_per_call() == 20);
    // 41 queries: two parts of 20 and 21 on 2 or 3 threads; 39: one call.
    for (const std::size_t queries_n : {std::size_t{39}, std::size_t{41}, std::size_t{300}}) {
      INFO(queries_n << " queries");
      const std::vector<float> queries = gaussian(queries_n, kDim, 4);
      const winnow::index::SearchResults one = index->search(queries_n, queries.data(), kK);
      for (const int threads : {1, 2, 3}) {
        INFO(threads << " threads");
        ThreadPool pool(threads);
        const winnow::index::SearchResults split =
            search_on_pool(pool, *index, queries_n, queries.data(), kK);
        CHECK(split.ids == one.ids);
        CHECK(std::memcmp(split.similarities.data(), one.similarities.data(),
                          one.similarities.size() * sizeof(float)) == 0);
      }
      // A part's own call has the whole's results from 20 queries on; a call
      // of 19 takes the other kernel and rounds otherwise (why parts stay >= 20).
      if (index->per_query_results() && queries_n == 41) {
        const winnow::index::SearchResults first = index->search(20, queries.data(), kK);
        CHECK(std::memcmp(first.similarities.data(), one.similarities.data(),
                          first.similarities.size() * sizeof(float)) == 0);
        const winnow::index::SearchResults few = index->search(19, queries.data(), kK);
        CHECK(std::memcmp(few.similarities.data(), one.similarities.data(),
                          few.similarities.size() * sizeof(float)) != 0);
      }
    }
  }
}
