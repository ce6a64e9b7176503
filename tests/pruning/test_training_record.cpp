#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "winnow/error.h"
#include "winnow/pruning/training_record.h"

using winnow::TrainingRecord;

TEST_CASE("training record: mean loss, its trend over epochs, last loss", "[pruning][record]") {
  TrainingRecord record(3);
  // Sample 0 falls from 2.0 by 0.5 an epoch; sample 1 stays at 1.5; sample 2 is never seen.
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
    const std::vector<std::uint64_t> ids = {0, 1};
    const std::vector<float> losses = {2.0f - 0.5f * static_cast<float>(epoch), 1.5f};
    record.add(epoch, ids.data(), losses.data(), ids.size());
  }
  const auto falling = record.stats(0);
  CHECK(falling.seen == 4);
  CHECK(falling.mean_loss == Approx(1.25));
  CHECK(falling.loss_trend == Approx(-0.5));
  CHECK(falling.last_loss == Approx(0.5));
  CHECK(falling.last_epoch == 3);
  CHECK(record.stats(1).loss_trend == Approx(0.0).margin(1e-9));
  CHECK(record.stats(1).mean_loss == Approx(1.5));
  CHECK(record.stats(2).seen == 0);
  CHECK(record.stats(2).mean_loss == 0.0);

  // One epoch only: no trend.
  TrainingRecord once(1);
  const std::uint64_t id = 0;
  const float loss = 3.0f;
  once.add(5, &id, &loss, 1);
  once.add(5, &id, &loss, 1);
  CHECK(once.stats(0).loss_trend == 0.0);

  const std::uint64_t bad_id = 3;
  CHECK_THROWS_WITH(record.add(0, &bad_id, &loss, 1), Catch::Contains("out of range for 3"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(record.add(0, &id, &nan, 1), Catch::Contains("not finite"));
  CHECK_THROWS_AS(record.stats(9), winnow::Error);
}
