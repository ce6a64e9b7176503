#include <catch2/catch.hpp>

#include <limits>

#include "index_test_helpers.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::index;
using namespace winnow::index::test;
using Catch::Matchers::Contains;

TEST_CASE("bad input throws clear errors and leaves the index unchanged", "[validation]") {
  const std::string config =
      GENERATE(as<std::string>{}, "flat", "hnsw(M=8,efConstruction=20,efSearch=16)",
               "ivf(nprobe=2,cellScale=100)");
  INFO(config);
  const std::size_t d = 8;
  auto index = make_vector_index(config, d);
  const std::vector<float> base = clustered_vectors(50, d, 5, 3);
  index->add(sequential_ids(50, 100), base);
  const std::vector<float> query(base.begin(), base.begin() + d);
  const SearchResults before = index->search(query, 5);

  auto unchanged = [&] {
    CHECK(index->size() == 50);
    CHECK(index->tombstones() == 0);
    CHECK_FALSE(index->contains(1));
    const SearchResults after = index->search(query, 5);
    CHECK(after.ids == before.ids);
  };

  SECTION("vector array of the wrong length") {
    CHECK_THROWS_WITH(index->add({1, 2}, std::vector<float>(2 * d - 1, 1.0f)),
                      Contains("2 ids need 16 floats") && Contains("got 15"));
    unchanged();
  }
  SECTION("query array of the wrong length") {
    CHECK_THROWS_WITH(index->search(std::vector<float>(d + 1, 1.0f), 3),
                      Contains("not a multiple of dim 8"));
    unchanged();
  }
  SECTION("NaN and infinity") {
    std::vector<float> v(2 * d, 0.5f);
    v[d + 3] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(index->add({1, 2}, v),
                      Contains("vector 1 has a non-finite value") && Contains("component 3"));
    v[d + 3] = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(index->add({1, 2}, v), Contains("non-finite"));
    std::vector<float> q(d, 1.0f);
    q[0] = -std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(index->search(q, 3), Contains("query 0 has a non-finite value"));
    unchanged();
  }
  SECTION("zero vectors cannot be normalised") {
    std::vector<float> v(2 * d, 0.5f);
    std::fill(v.begin() + d, v.end(), 0.0f);
    CHECK_THROWS_WITH(index->add({1, 2}, v), Contains("vector 1 has zero"));
    CHECK_THROWS_WITH(index->search(std::vector<float>(d, 0.0f), 3), Contains("query 0 has zero"));
    unchanged();
  }
  SECTION("duplicate ids") {
    const std::vector<float> v(2 * d, 0.5f);
    CHECK_THROWS_WITH(index->add({1, 100}, v),
                      Contains("id 100") && Contains("already in the index"));
    CHECK_THROWS_WITH(index->add({1, 1}, v), Contains("id 1 is repeated in the batch"));
    unchanged();
  }
  SECTION("negative ids") {
    CHECK_THROWS_WITH(index->add({-5}, std::vector<float>(d, 0.5f)),
                      Contains("id -5") && Contains("negative"));
    unchanged();
  }
  SECTION("k must be positive") {
    CHECK_THROWS_WITH(index->search(query, 0), Contains("k must be positive, got 0"));
    CHECK_THROWS_WITH(index->search(query, -3), Contains("got -3"));
    unchanged();
  }
  SECTION("errors are winnow::Error") {
    CHECK_THROWS_AS(index->search(query, 0), winnow::Error);
    CHECK_THROWS_AS(index->add({100}, query), winnow::Error);
    unchanged();
  }
}

TEST_CASE("empty batches are no-ops", "[validation]") {
  auto index = make_vector_index("hnsw", 4);
  index->add(std::vector<std::int64_t>{}, std::vector<float>{});
  CHECK(index->size() == 0);
  CHECK(index->remove(std::vector<std::int64_t>{}) == 0);
  const SearchResults res = index->search(std::vector<float>{}, 3);
  CHECK(res.num_queries == 0);
}
