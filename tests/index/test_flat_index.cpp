#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "index_test_helpers.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::index;
using namespace winnow::index::test;

namespace {

// Checks a result row against brute force: same similarity at every rank, and
// every returned id really has the similarity reported for it.
void check_exact(const SearchResults& res, std::size_t q, const std::vector<Neighbour>& truth,
                 const std::unordered_map<std::int64_t, std::size_t>& row_of,
                 const std::vector<float>& base, const float* query, std::size_t d) {
  REQUIRE(res.count(q) == truth.size());
  for (std::size_t r = 0; r < truth.size(); ++r) {
    INFO("query " << q << " rank " << r);
    CHECK(res.similarity(q, r) == Approx(truth[r].similarity).margin(1e-5));
    const auto it = row_of.find(res.id(q, r));
    REQUIRE(it != row_of.end());
    double dot = 0.0;
    double qn = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      dot += static_cast<double>(query[j]) * base[it->second * d + j];
      qn += static_cast<double>(query[j]) * query[j];
    }
    CHECK(res.similarity(q, r) == Approx(dot / std::sqrt(qn)).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("flat search returns the exact neighbours", "[flat]") {
  const std::size_t d = 32;
  // Many of the batched search's 256-row blocks, and not a multiple of 4: the
  // fused kernel's last rows go one at a time.
  const std::size_t n = 5003;
  const std::vector<float> base = clustered_vectors(n, d, 20, 1);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1000, 3);
  std::unordered_map<std::int64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < n; ++i) {
    row_of[ids[i]] = i;
  }
  FlatVectorIndex index(d);
  index.add(ids, base);
  REQUIRE(index.size() == n);

  // 5 queries take the per-query vectorised scan, 25 and 300 (two query
  // blocks) the blocked sgemm search.
  for (const std::size_t nq : {std::size_t{1}, std::size_t{5}, std::size_t{25}, std::size_t{300}}) {
    std::vector<float> queries = clustered_vectors(nq, d, 20, 99);
    for (float& v : queries) {
      v *= 3.5f;  // not normalised: the index normalises queries itself
    }
    const SearchResults res = index.search(queries, 10);
    REQUIRE(res.num_queries == nq);
    REQUIRE(res.k == 10);
    for (std::size_t q = 0; q < nq; ++q) {
      const auto truth = brute_force(base, ids, queries.data() + q * d, d, 10);
      check_exact(res, q, truth, row_of, base, queries.data() + q * d, d);
    }
  }

  // A stored vector finds itself first with similarity 1.
  const SearchResults self =
      index.search(std::vector<float>(base.begin() + 7 * d, base.begin() + 8 * d), 1);
  CHECK(self.id(0, 0) == ids[7]);
  CHECK(self.similarity(0, 0) == Approx(1.0).margin(1e-5));
}

TEST_CASE("flat remove deletes rows and search never returns them", "[flat]") {
  const std::size_t d = 16;
  const std::size_t n = 500;
  const std::vector<float> base = clustered_vectors(n, d, 10, 2);
  const std::vector<std::int64_t> ids = sequential_ids(n, 0, 2);
  auto index = make_vector_index("flat", d);
  index->add(ids, base);

  std::vector<std::int64_t> removed;
  for (std::size_t i = 0; i < n; i += 7) {
    removed.push_back(ids[i]);
  }
  removed.push_back(ids[0]);  // repeated: removed once
  removed.push_back(12345);   // unknown: ignored
  CHECK(index->remove(removed) == (n + 6) / 7);
  CHECK(index->size() == n - (n + 6) / 7);
  CHECK(index->tombstones() == 0);
  CHECK_FALSE(index->contains(ids[7]));
  CHECK(index->contains(ids[8]));
  CHECK(index->remove(removed) == 0);

  std::unordered_map<std::int64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < n; ++i) {
    row_of[ids[i]] = i;
  }
  // Query with the removed vectors themselves, on both search paths.
  for (const std::size_t nq : {std::size_t{3}, std::size_t{30}}) {
    std::vector<float> queries;
    for (std::size_t i = 0; i < nq; ++i) {
      const std::size_t row = 7 * i;
      queries.insert(queries.end(), base.begin() + static_cast<std::ptrdiff_t>(row * d),
                     base.begin() + static_cast<std::ptrdiff_t>((row + 1) * d));
    }
    const SearchResults res = index->search(queries, 5);
    for (std::size_t q = 0; q < nq; ++q) {
      for (std::size_t r = 0; r < res.count(q); ++r) {
        CHECK(std::find(removed.begin(), removed.end(), res.id(q, r)) == removed.end());
      }
      const auto truth = brute_force(base, ids, queries.data() + q * d, d, 5, removed);
      check_exact(res, q, truth, row_of, base, queries.data() + q * d, d);
    }
  }

  // The remaining rows keep their ids after compaction of the storage.
  const std::vector<std::int64_t> live = index->ids();
  CHECK(live.size() == index->size());
  CHECK(std::is_sorted(live.begin(), live.end()));

  // A removed id can be added again.
  index->add({ids[7]}, std::vector<float>(base.begin() + 7 * d, base.begin() + 8 * d));
  CHECK(index->contains(ids[7]));
  const SearchResults again =
      index->search(std::vector<float>(base.begin() + 7 * d, base.begin() + 8 * d), 1);
  CHECK(again.id(0, 0) == ids[7]);
}

TEST_CASE("flat search pads rows when k exceeds the index size", "[flat]") {
  FlatVectorIndex index(4);
  SearchResults empty = index.search(std::vector<float>{1, 0, 0, 0}, 3);
  CHECK(empty.count(0) == 0);
  CHECK(empty.id(0, 0) == -1);

  index.add({10, 20}, {1, 0, 0, 0, 0, 1, 0, 0});
  const SearchResults res = index.search(std::vector<float>{2, 1, 0, 0}, 5);
  REQUIRE(res.count(0) == 2);
  CHECK(res.id(0, 0) == 10);
  CHECK(res.id(0, 1) == 20);
  CHECK(res.similarity(0, 0) == Approx(2.0 / std::sqrt(5.0)));
  CHECK(res.id(0, 2) == -1);
  CHECK(std::isinf(res.similarity(0, 4)));
}

TEST_CASE("results of two indexes merge into the best k of both, row by row", "[index][flat]") {
  const std::size_t d = 8, n = 300, q = 20, k = 7;
  const std::vector<float> base = clustered_vectors(n, d, 10, 11, 0.35f, 0);
  const std::vector<float> queries = clustered_vectors(q, d, 10, 12, 0.35f, 0);
  // Even ids in one index, odd in the other; together they are one index.
  auto even = make_vector_index("flat", d), odd = make_vector_index("flat", d),
       all = make_vector_index("flat", d);
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<std::int64_t>(i);
    (i % 2 == 0 ? even : odd)->add(1, &id, base.data() + i * d);
    all->add(1, &id, base.data() + i * d);
  }
  const SearchResults merged = SearchResults::merged(even->search(q, queries.data(), k),
                                                     odd->search(q, queries.data(), k), k);
  const SearchResults truth = all->search(q, queries.data(), k);
  CHECK(merged.num_queries == q);
  CHECK(merged.ids == truth.ids);
  // One side empty (k == 0, as an empty index's caller leaves it): the other, padded.
  const SearchResults alone =
      SearchResults::merged(SearchResults{}, odd->search(q, queries.data(), 3), 5);
  CHECK(alone.count(0) == 3);
  CHECK(alone.id(0, 3) == -1);
  CHECK_THROWS_WITH(SearchResults::merged(even->search(2, queries.data(), k),
                                          odd->search(3, queries.data(), k), k),
                    Catch::Matchers::Contains("2 and 3 queries"));
}
