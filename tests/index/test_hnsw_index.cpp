#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "index_test_helpers.h"
#include "winnow/error.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/index/hnsw_vector_index.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::index;
using namespace winnow::index::test;

namespace {

constexpr std::size_t kDim = 64;
constexpr std::size_t kRows = 3000;

struct Fixture {
  Dataset data = clustered_dataset(kRows, 200, kDim, 30, 11);
  std::vector<float>& base = data.base;
  std::vector<float>& queries = data.queries;
  std::vector<std::int64_t> ids = sequential_ids(kRows, 5, 1);
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

std::vector<float> rows(const std::vector<float>& base, const std::vector<std::size_t>& which) {
  std::vector<float> out;
  for (const std::size_t i : which) {
    out.insert(out.end(), base.begin() + static_cast<std::ptrdiff_t>(i * kDim),
               base.begin() + static_cast<std::ptrdiff_t>((i + 1) * kDim));
  }
  return out;
}

}  // namespace

TEST_CASE("HNSW recall@10 against flat on clustered vectors", "[hnsw]") {
  const Fixture& f = fixture();
  FlatVectorIndex flat(kDim);
  flat.add(f.ids, f.base);
  auto hnsw = make_vector_index("hnsw(M=16,efConstruction=40,efSearch=64)", kDim);
  hnsw->add(f.ids, f.base);
  REQUIRE(hnsw->size() == kRows);

  const SearchResults exact = flat.search(f.queries, 10);
  const SearchResults approx = hnsw->search(f.queries, 10);  // batch path
  const double r10 = recall(approx, exact, 10);
  const double r1 = recall(approx, exact, 1);
  INFO("recall@1 " << r1 << " recall@10 " << r10);
  CHECK(r10 >= 0.95);
  CHECK(r1 >= 0.95);

  // Single queries take the serial path: same answers as the batch path.
  for (std::size_t q = 0; q < 10; ++q) {
    const std::vector<float> one(f.queries.begin() + static_cast<std::ptrdiff_t>(q * kDim),
                                 f.queries.begin() + static_cast<std::ptrdiff_t>((q + 1) * kDim));
    const SearchResults single = hnsw->search(one, 10);
    for (std::size_t r = 0; r < 10; ++r) {
      CHECK(single.id(0, r) == approx.id(q, r));
      CHECK(single.similarity(0, r) == Approx(approx.similarity(q, r)).margin(1e-6));
    }
  }
}

TEST_CASE("HNSW search skips tombstones and compact drops them", "[hnsw]") {
  const Fixture& f = fixture();
  HnswVectorIndex hnsw(kDim, HnswParams{16, 40, 64});
  hnsw.add(f.ids, f.base);

  std::vector<std::size_t> gone_rows;
  std::vector<std::int64_t> gone;
  for (std::size_t i = 0; i < kRows; i += 10) {
    gone_rows.push_back(i);
    gone.push_back(f.ids[i]);
  }
  CHECK(hnsw.remove(gone) == gone.size());
  CHECK(hnsw.remove(gone) == 0);
  CHECK(hnsw.size() == kRows - gone.size());
  CHECK(hnsw.tombstones() == gone.size());
  CHECK_FALSE(hnsw.contains(gone[3]));
  CHECK(hnsw.contains(f.ids[1]));
  CHECK(hnsw.ids().size() == hnsw.size());

  // Queries equal to removed vectors: the removed ids would rank first.
  const std::vector<float> probes = rows(f.base, gone_rows);
  const std::set<std::int64_t> gone_set(gone.begin(), gone.end());
  auto check_none_removed = [&](const VectorIndex& index) {
    const SearchResults batch = index.search(probes, 10);
    std::size_t returned_removed = 0;
    for (std::size_t q = 0; q < batch.num_queries; ++q) {
      CHECK(batch.count(q) == 10);
      for (std::size_t r = 0; r < batch.count(q); ++r) {
        returned_removed += gone_set.count(batch.id(q, r));
      }
    }
    for (std::size_t q = 0; q < 5; ++q) {  // serial path
      const SearchResults one = index.search(
          std::vector<float>(probes.begin() + static_cast<std::ptrdiff_t>(q * kDim),
                             probes.begin() + static_cast<std::ptrdiff_t>((q + 1) * kDim)),
          10);
      for (std::size_t r = 0; r < one.count(0); ++r) {
        returned_removed += gone_set.count(one.id(0, r));
      }
    }
    CHECK(returned_removed == 0);
  };
  check_none_removed(hnsw);

  FlatVectorIndex flat(kDim);
  flat.add(f.ids, f.base);
  flat.remove(gone);
  const SearchResults exact = flat.search(f.queries, 10);
  CHECK(recall(hnsw.search(f.queries, 10), exact, 10) >= 0.9);

  hnsw.compact();
  CHECK(hnsw.tombstones() == 0);
  CHECK(hnsw.size() == kRows - gone.size());
  CHECK_FALSE(hnsw.contains(gone[3]));
  check_none_removed(hnsw);
  CHECK(recall(hnsw.search(f.queries, 10), exact, 10) >= 0.95);

  // A removed id can come back.
  hnsw.add({gone[0]}, rows(f.base, {gone_rows[0]}));
  const SearchResults back = hnsw.search(rows(f.base, {gone_rows[0]}), 1);
  CHECK(back.id(0, 0) == gone[0]);
}

TEST_CASE("HNSW with every vector removed returns nothing", "[hnsw]") {
  HnswVectorIndex hnsw(4);
  hnsw.add({1, 2, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  CHECK(hnsw.remove({1, 2, 3}) == 3);
  const SearchResults res = hnsw.search(std::vector<float>{1, 0, 0, 0}, 2);
  CHECK(res.count(0) == 0);
  hnsw.compact();
  CHECK(hnsw.tombstones() == 0);
  CHECK(hnsw.search(std::vector<float>{1, 0, 0, 0}, 2).count(0) == 0);
  hnsw.add({4}, {0, 0, 0, 1});
  CHECK(hnsw.search(std::vector<float>{0, 0, 0, 2}, 2).id(0, 0) == 4);
}

TEST_CASE("HNSW efSearch can be changed and shows in the config", "[hnsw]") {
  HnswVectorIndex hnsw(8, HnswParams{8, 20, 16});
  hnsw.set_ef_search(100);
  CHECK(hnsw.config() == "hnsw(M=8,efConstruction=20,efSearch=100)");
  CHECK_THROWS_AS(hnsw.set_ef_search(0), winnow::Error);
  CHECK(hnsw.params().ef_search == 100);
}
