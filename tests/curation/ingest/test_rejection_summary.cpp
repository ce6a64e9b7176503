// RejectionSummary: grouping a batch's rejection reasons.
#include <catch2/catch.hpp>

#include "winnow/curation/ingest/rejection_summary.h"

using winnow::curation::ingest::rejection_pattern;
using winnow::curation::ingest::RejectionSummary;

TEST_CASE("rejection_pattern: numbers and the record's own key do not split a group",
          "[rejections]") {
  CHECK(rejection_pattern("pixels[3] must be an integer 0-255, got 300", "") ==
        "pixels[N] must be an integer N-N, got N");
  CHECK(rejection_pattern("cannot embed: record 'k7' has text content", "k7") ==
        "cannot embed: record '<key>' has text content");
  CHECK(rejection_pattern("field 'key' is empty", "") == "field 'key' is empty");
}

TEST_CASE("RejectionSummary: most frequent first, ties by first appearance, bounded",
          "[rejections]") {
  RejectionSummary summary;
  summary.add("field 'text' is empty", "a", 1);
  summary.add("line is 20 bytes, longer than the limit of 10 bytes", "", 2);
  summary.add("line is 31 bytes, longer than the limit of 10 bytes", "", 3);
  summary.add("field 'text' is empty", "b", 4);
  summary.add("missing field 'key'", "", 5);
  summary.add("field 'text' is empty", "c", 6);
  const auto groups = summary.groups();
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].count == 3);
  CHECK(groups[0].example_key == "a");
  CHECK(groups[1].count == 2);
  CHECK(groups[1].example_line == 2);
  CHECK(groups[1].reason == "line is 20 bytes, longer than the limit of 10 bytes");
  CHECK(groups[2].reason == "missing field 'key'");

  RejectionSummary many;
  for (std::size_t i = 0; i < RejectionSummary::kMaxGroups + 10; ++i) {
    many.add("reason " + std::string(i % 26 + 1, 'x') + std::string(i / 26 + 1, 'y'), "", i);
  }
  CHECK(many.groups().size() == RejectionSummary::kMaxGroups);
  CHECK(many.other_count() == 10);
}
