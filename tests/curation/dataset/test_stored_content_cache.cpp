// StoredContentCache: the stored contents an ingest process keeps for
// near-duplicate verification, least recently used first out past a byte
// budget.
#include <catch2/catch.hpp>

#include <string>

#include "winnow/curation/dataset/lookup/stored_content_cache.h"

namespace {

using winnow::curation::StoredContentCache;
using winnow::store::StoredContent;

StoredContent text(const std::string& bytes) {
  return {"text", 0, 0, bytes};
}

}  // namespace

TEST_CASE("stored content cache: finds what it keeps, and drops the least recently used",
          "[ingest][cache]") {
  const std::string body(1000, 'x');
  StoredContentCache probe(1 << 20);
  probe.put(0, text(body + "0"));  // built as the others are, so of the same capacity
  const std::size_t one = probe.bytes();
  REQUIRE(one >= body.size());

  StoredContentCache cache(3 * one);  // room for three such contents
  cache.put(1, text(body + "1"));
  cache.put(2, text(body + "2"));
  cache.put(3, text(body + "3"));
  REQUIRE(cache.size() == 3);
  REQUIRE(cache.find(1) != nullptr);  // 1 is now the most recently used
  CHECK(cache.find(1)->bytes == body + "1");
  cache.put(4, text(body + "4"));  // over the budget: 2 goes
  CHECK(cache.size() == 3);
  CHECK(cache.bytes() <= 3 * one);
  CHECK(cache.find(2) == nullptr);
  CHECK(cache.find(1) != nullptr);
  CHECK(cache.find(3) != nullptr);
  REQUIRE(cache.find(4) != nullptr);
  CHECK(cache.find(4)->bytes == body + "4");

  // An id already kept keeps its first content (a stored content never changes).
  cache.put(4, text("other"));
  CHECK(cache.find(4)->bytes == body + "4");

  // A content larger than the whole budget is not kept, and evicts nothing.
  cache.put(5, text(std::string(4 * one, 'y')));
  CHECK(cache.find(5) == nullptr);
  CHECK(cache.size() == 3);

  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(cache.bytes() == 0);
  CHECK(cache.find(1) == nullptr);
}
