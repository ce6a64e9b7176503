// The value of one more label (curation/annotate/src/expected_gain.h): zero
// for a random annotator, the split it resolves for a perfect one, never
// negative, and larger for the better annotator; the prior's shrinkage.
#include <catch2/catch.hpp>

#include <vector>

#include "expected_gain.h"

using winnow::curation::annotate::expected_accuracy_gain;
using winnow::curation::annotate::expected_purity_gain;
using winnow::curation::annotate::shrunk_confusion;

TEST_CASE("expected gain: random answers gain nothing, a perfect annotator resolves the split",
          "[annotate]") {
  const std::vector<double> split = {0.5, 0.5, 0.0};
  const std::vector<double> random(9, 1.0 / 3.0);
  CHECK(expected_accuracy_gain(split, random) == Approx(0.0).margin(1e-12));
  const std::vector<double> perfect = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK(expected_accuracy_gain(split, perfect) == Approx(0.5));
  // A sure item gains nothing from anyone.
  CHECK(expected_accuracy_gain({1.0, 0.0, 0.0}, perfect) == Approx(0.0).margin(1e-12));
  // The better annotator gains more on the same item.
  const std::vector<double> good = shrunk_confusion({}, 3, 0, 0.9, 10);
  const std::vector<double> fair = shrunk_confusion({}, 3, 0, 0.6, 10);
  const std::vector<double> unsure = {0.4, 0.35, 0.25};
  CHECK(expected_accuracy_gain(unsure, good) > expected_accuracy_gain(unsure, fair));
  CHECK(expected_accuracy_gain(unsure, fair) >= 0.0);
}

TEST_CASE("shrunk confusion: the prior without history, the record as it grows", "[annotate]") {
  const std::vector<double> spammer(4, 0.5);  // 2 classes, answers at random
  const std::vector<double> none = shrunk_confusion(spammer, 2, 0, 0.7, 10);
  CHECK(none[0] == Approx(0.7));
  CHECK(none[1] == Approx(0.3));
  const std::vector<double> many = shrunk_confusion(spammer, 2, 990, 0.7, 10);
  CHECK(many[0] == Approx(0.502));
  for (std::size_t c = 0; c < 2; ++c) CHECK(many[c * 2] + many[c * 2 + 1] == Approx(1.0));
}

TEST_CASE("purity gain: positive where one answer cannot change the consensus yet", "[annotate]") {
  const std::vector<double> fairly_sure = {0.83, 0.17};
  const std::vector<double> fair = shrunk_confusion({}, 2, 0, 0.7, 10);
  CHECK(expected_accuracy_gain(fairly_sure, fair) == Approx(0.0).margin(1e-12));
  CHECK(expected_purity_gain(fairly_sure, fair) > 0.0);
  const std::vector<double> random(4, 0.5);
  CHECK(expected_purity_gain(fairly_sure, random) == Approx(0.0).margin(1e-12));
  // More for the less settled item.
  CHECK(expected_purity_gain({0.6, 0.4}, fair) > expected_purity_gain(fairly_sure, fair));
}
