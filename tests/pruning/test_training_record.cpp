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

TEST_CASE("training record: the class predicted in most epochs", "[pruning][record]") {
  winnow::TrainingRecord record(3);
  const std::uint64_t ids[] = {0, 1};
  const float losses[] = {1.0f, 1.0f};
  // Sample 0: class 4, 4, 7, 4, 7 (4 has the majority); sample 1: always 2.
  const std::int64_t predicted[5][2] = {{4, 2}, {4, 2}, {7, 2}, {4, 2}, {7, 2}};
  for (std::uint64_t e = 0; e < 5; ++e) record.add(e, ids, losses, 2, predicted[e]);
  CHECK(record.stats(0).predicted == 4);
  CHECK(record.stats(1).predicted == 2);
  CHECK(record.stats(2).predicted == -1);  // never seen
  winnow::TrainingRecord losses_only(1);
  losses_only.add(0, ids, losses, 1);
  CHECK(losses_only.stats(0).predicted == -1);  // no predictions passed
  const std::int64_t negative[] = {-1};
  CHECK_THROWS_WITH(losses_only.add(1, ids, losses, 1, negative),
                    Catch::Contains("negative predicted class"));
  CHECK(losses_only.stats(0).seen == 1);  // the bad call recorded nothing
}
