#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/training_stats_table.h"

using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

TEST_CASE("training stats: stored, replaced by a later run, refused when not finite",
          "[store][training]") {
  TempDir dir;
  MetadataStore store(dir.file("training.db"));
  const std::int64_t a = store.insert_sample(make_sample(1));
  const std::int64_t b = store.insert_sample(make_sample(2));
  TrainingStatsTable table(store.database());
  CHECK(table.count() == 0);
  table.put({{a, 4, 2.5, -0.1, 2.2, 3, "r1", 1}, {b, 4, 0.2, -0.05, 0.1, 3, "r1", 2}});
  CHECK(table.count() == 2);
  REQUIRE(table.find(a));
  CHECK(table.find(a)->mean_loss == 2.5);
  CHECK(table.find(a)->label == 1);
  table.put({{a, 8, 1.0, -0.2, 0.5, 7, "r2", 1}});
  CHECK(table.count() == 2);
  CHECK(table.find(a)->run == "r2");
  CHECK(table.find(a)->seen == 8);
  CHECK_FALSE(table.find(a + 100));

  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(
      table.put({{b, 1, 0.1, 0.0, 0.1, 0, "r3", 2}, {a, 1, nan, 0.0, 0.1, 0, "r3", 1}}),
      Catch::Contains("not finite"));
  CHECK(table.find(b)->run == "r1");  // nothing of the refused call was written
  std::size_t visited = 0;
  table.for_each([&](const TrainingStats&) { ++visited; });
  CHECK(visited == 2);
}
