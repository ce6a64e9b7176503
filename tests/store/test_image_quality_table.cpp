// ImageQualityTable: rows written and read back, counted per issue, joined
// with their samples' source, label and status; bad rows refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::TempDir;

namespace {

ImageQualityRecord row_of(std::int64_t sample_id, std::vector<ImageIssue> issues) {
  ImageQualityRecord r;
  r.sample_id = sample_id;
  r.width = 300;
  r.height = 200;
  for (ImageIssue issue : kAllImageIssues) r.scores[static_cast<std::size_t>(issue)] = 0.9;
  r.scores[static_cast<std::size_t>(ImageIssue::odd_size)] = std::nullopt;  // not judged
  for (ImageIssue issue : issues) {
    r.scores[static_cast<std::size_t>(issue)] = 0.01;
    r.issues[static_cast<std::size_t>(issue)] = true;
  }
  return r;
}

}  // namespace

TEST_CASE("image quality rows round-trip and are counted per issue", "[store][image_quality]") {
  TempDir dir;
  MetadataStore store(dir.file("q.db"));
  ImageQualityTable table(store.database());
  const std::int64_t a = store.insert_sample(test::make_sample(1, "crawl"));
  const std::int64_t b = store.insert_sample(test::make_sample(2, "vendor"));
  const std::int64_t c = store.insert_sample(test::make_sample(3, "vendor"));
  table.put(row_of(a, {}));
  table.put(row_of(b, {ImageIssue::blurry, ImageIssue::dark}));
  table.put(row_of(c, {ImageIssue::dark}));

  const std::optional<ImageQualityRecord> got = table.find(b);
  REQUIRE(got.has_value());
  CHECK(got->width == 300);
  CHECK(got->height == 200);
  CHECK(got->has(ImageIssue::blurry));
  CHECK(got->has(ImageIssue::dark));
  CHECK_FALSE(got->has(ImageIssue::bright));
  CHECK(got->score(ImageIssue::blurry) == Approx(0.01));
  CHECK_FALSE(got->score(ImageIssue::odd_size).has_value());
  CHECK_FALSE(table.find(a)->any_issue());

  const ImageIssueCounts counts = table.count();
  CHECK(counts.images == 3);
  CHECK(counts.with_issue == 2);
  CHECK(counts.issues[static_cast<std::size_t>(ImageIssue::dark)] == 2);
  CHECK(counts.issues[static_cast<std::size_t>(ImageIssue::blurry)] == 1);
  CHECK(counts.issues[static_cast<std::size_t>(ImageIssue::grayscale)] == 0);

  std::vector<std::string> sources;
  table.for_each([&](const ImageQualityTable::Row& row) {
    sources.push_back(row.source);
    CHECK(row.label == row.record.sample_id % 10);  // make_sample's label is i % 10
    CHECK(row.status == SampleStatus::accepted);
  });
  CHECK(sources == std::vector<std::string>{"crawl", "vendor", "vendor"});

  CHECK(table.count_by_area() == std::vector<std::pair<std::int64_t, std::int64_t>>{{60000, 3}});
  CHECK(table.count_colour(0.5) == 3);
  CHECK(table.count_colour(0.95) == 0);
}

TEST_CASE("image quality rows must have a size, finite scores and a sample",
          "[store][image_quality]") {
  TempDir dir;
  MetadataStore store(dir.file("bad.db"));
  ImageQualityTable table(store.database());
  const std::int64_t a = store.insert_sample(test::make_sample(1));
  ImageQualityRecord zero = row_of(a, {});
  zero.width = 0;
  CHECK_THROWS_WITH(table.put(zero), Catch::Contains("is not positive"));
  ImageQualityRecord nan = row_of(a, {});
  nan.scores[0] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(table.put(nan), Catch::Contains("blurry score"));
  CHECK_THROWS_AS(table.put(row_of(a + 100, {})), winnow::Error);  // no such sample
  table.put(row_of(a, {}));
  CHECK_THROWS_AS(table.put(row_of(a, {})), winnow::Error);  // one row per sample
  CHECK(table.count().images == 1);
}
