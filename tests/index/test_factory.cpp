#include <catch2/catch.hpp>

#include "winnow/error.h"
#include "winnow/index/hnsw_vector_index.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::index;

TEST_CASE("factory strings make the right index", "[factory]") {
  auto flat = make_vector_index("flat", 16);
  CHECK(flat->type() == "flat");
  CHECK(flat->config() == "flat");
  CHECK(flat->dim() == 16);
  CHECK(flat->size() == 0);

  auto hnsw = make_vector_index("hnsw", 8);
  CHECK(hnsw->type() == "hnsw");
  CHECK(hnsw->config() == "hnsw(M=24,efConstruction=80,efSearch=128)");

  auto custom = make_vector_index(" hnsw( efSearch = 256, M=16 ) ", 8);
  CHECK(custom->config() == "hnsw(M=16,efConstruction=80,efSearch=256)");
  const auto* typed = dynamic_cast<const HnswVectorIndex*>(custom.get());
  REQUIRE(typed != nullptr);
  CHECK(typed->params().M == 16);
  CHECK(typed->params().ef_search == 256);
}

TEST_CASE("canonical configs round-trip", "[factory]") {
  for (const char* config : {"flat", "hnsw(M=8,efConstruction=100,efSearch=20)"}) {
    CHECK(canonical_vector_index_config(config) == config);
    CHECK(canonical_vector_index_config(canonical_vector_index_config(config)) == config);
  }
  CHECK(canonical_vector_index_config("hnsw()") == "hnsw(M=24,efConstruction=80,efSearch=128)");
}

TEST_CASE("bad factory strings are rejected with the offending part", "[factory]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(make_vector_index("lsh", 8), Contains("unknown index type 'lsh'"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M=32", 8), Contains("parentheses"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(m=32)", 8), Contains("unknown key 'm'"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M=abc)", 8), Contains("not a positive integer"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M=-3)", 8), Contains("not a positive integer"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M=1)", 8), Contains("M must be in"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(efSearch=0)", 8), Contains("efSearch"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M=8,M=16)", 8), Contains("given twice"));
  CHECK_THROWS_WITH(make_vector_index("hnsw(M)", 8), Contains("key=value"));
  CHECK_THROWS_WITH(make_vector_index("flat(M=3)", 8), Contains("takes no parameters"));
  CHECK_THROWS_WITH(make_vector_index("flat", 0), Contains("dimension"));
  CHECK_THROWS_AS(make_vector_index("", 8), winnow::Error);
}
