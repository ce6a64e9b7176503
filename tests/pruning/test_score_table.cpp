#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "winnow/error.h"
#include "test_helpers.h"
#include "winnow/pruning/score_table.h"

using winnow::ScoreTable;
namespace test = winnow::test;

TEST_CASE("scores start equal and keep stale values for unseen samples", "[scores]") {
  ScoreTable table(5, 3.0f);
  CHECK(table.mean() == Approx(3.0));
  const std::vector<std::uint64_t> ids{1, 3};
  const std::vector<float> losses{0.5f, 2.0f};
  table.update(ids.data(), losses.data(), ids.size());
  CHECK(table[0] == 3.0f);
  CHECK(table[1] == 0.5f);
  CHECK(table[2] == 3.0f);  // stale
  CHECK(table[3] == 2.0f);
  CHECK(table.mean() == Approx((3.0 + 0.5 + 3.0 + 2.0 + 3.0) / 5));
  CHECK(table.bytes() == 5 * sizeof(float));
}

TEST_CASE("a bad update changes nothing", "[scores]") {
  ScoreTable table(4, 1.0f);
  const std::vector<std::uint64_t> ids{0, 1, 7};
  const std::vector<float> losses{5.0f, 6.0f, 1.0f};
  CHECK_THROWS_WITH(table.update(ids.data(), losses.data(), 3),
                    Catch::Contains("sample id 7") && Catch::Contains("out of range"));
  CHECK(table[0] == 1.0f);
  CHECK(table[1] == 1.0f);

  const std::vector<std::uint64_t> ok_ids{0, 1};
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const std::vector<float> bad_losses{2.0f, bad};
    CHECK_THROWS_WITH(table.update(ok_ids.data(), bad_losses.data(), 2),
                      Catch::Contains("must be finite"));
    CHECK(table[0] == 1.0f);
  }
}

TEST_CASE("a negative loss is refused unless the table allows it", "[scores]") {
  ScoreTable table(4, 1.0f);
  const std::vector<std::uint64_t> ids{0, 2};
  const std::vector<float> losses{2.0f, -1e30f};
  CHECK_THROWS_WITH(table.update(ids.data(), losses.data(), 2),
                    Catch::Contains("sample 2") && Catch::Contains("must not be negative"));
  CHECK(table.mean() == Approx(1.0));

  ScoreTable signed_table(4, 1.0f, 0.0f, /*allow_negative=*/true);
  signed_table.update(ids.data(), losses.data(), 2);
  CHECK(signed_table[2] == -1e30f);
}

TEST_CASE("every bad observation is caught wherever it sits in a long batch", "[scores]") {
  // The validity check runs branch-free over the whole batch first; one bad
  // value at any position must still reject the call and name the culprit.
  const std::size_t count = 300;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool allow_negative : {false, true}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{150}, count - 1}) {
      for (float bad : {nan, inf, -inf, -1.0f}) {
        if (allow_negative && bad == -1.0f) continue;
        ScoreTable table(1000, 1.0f, 0.0f, allow_negative);
        std::vector<std::uint64_t> ids = test::iota_ids(count);
        std::vector<float> losses(count, 0.5f);
        losses[at] = bad;
        INFO("bad " << bad << " at " << at << " allow_negative " << allow_negative);
        CHECK_THROWS_WITH(table.update(ids.data(), losses.data(), count),
                          Catch::Contains(fmt::format("position {}", at)));
        losses[at] = 0.5f;
        ids[at] = 1000;
        CHECK_THROWS_WITH(table.update(ids.data(), losses.data(), count),
                          Catch::Contains("sample id 1000"));
        CHECK(table.mean() == 1.0);
      }
    }
  }
  // Edge values that are valid: -0.0, the largest finite float, and (when
  // allowed) the most negative one.
  ScoreTable table(3, 1.0f, 0.0f, /*allow_negative=*/true);
  const std::vector<std::uint64_t> ids{0, 1, 2};
  const std::vector<float> edges{-0.0f, std::numeric_limits<float>::max(),
                                 -std::numeric_limits<float>::max()};
  table.update(ids.data(), edges.data(), 3);
  CHECK(table[1] == std::numeric_limits<float>::max());
  ScoreTable unsigned_table(2, 1.0f);
  unsigned_table.update(ids.data(), edges.data(), 2);
  CHECK(unsigned_table[0] == 0.0f);
}

TEST_CASE("momentum turns scores into an exponential moving average", "[scores]") {
  ScoreTable table(1, 1.0f, 0.75f);
  const std::uint64_t id = 0;
  const float loss = 3.0f;
  table.update(&id, &loss, 1);
  CHECK(table[0] == Approx(0.75 * 1.0 + 0.25 * 3.0));
}

TEST_CASE("score tables reject bad construction", "[scores]") {
  CHECK_THROWS_WITH(ScoreTable(0), Catch::Contains("num_samples must be positive"));
  CHECK_THROWS_AS(ScoreTable(3, std::nanf("")), winnow::Error);
  CHECK_THROWS_AS(ScoreTable(3, 1.0f, 1.0f), winnow::Error);
}
