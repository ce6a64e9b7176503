// Where the kNN label vote judges: lift over chance per class and for the
// whole set, on hand-computed cases.
#include <catch2/catch.hpp>

#include "winnow/curation/labels/label_evidence.h"
#include "winnow/error.h"

using namespace winnow::curation::labels;

TEST_CASE("label evidence: lift per class and for the dataset", "[label_evidence]") {
  LabelEvidence evidence({0.25, 10});
  // Class 1: 60 samples agreeing 0.9 on average; class 2: 40 agreeing 0.5.
  evidence.add(1, 60, 54.0);
  evidence.add(2, 40, 20.0);
  REQUIRE(evidence.samples() == 100);

  const ClassEvidence one = evidence.of(1);
  CHECK(one.samples == 60);
  CHECK(one.agreement == Approx(0.9));
  CHECK(one.chance == Approx(0.6));
  CHECK(one.lift == Approx((0.9 - 0.6) / 0.4));
  CHECK(one.judged);
  const ClassEvidence two = evidence.of(2);
  CHECK(two.lift == Approx((0.5 - 0.4) / 0.6));
  CHECK_FALSE(two.judged);  // lift 0.167 < 0.25
  // Kappa: observed 0.74, chance 0.6^2 + 0.4^2 = 0.52.
  CHECK(evidence.lift() == Approx((0.74 - 0.52) / 0.48));

  const std::vector<ClassEvidence> abstained = evidence.abstained();
  REQUIRE(abstained.size() == 1);
  CHECK(abstained[0].label == 2);
  CHECK(evidence.classes().size() == 2);
  CHECK_FALSE(evidence.judges(3));  // never seen
}

TEST_CASE("label evidence: one sample at a time sums as in bulk", "[label_evidence]") {
  LabelEvidence bulk;
  LabelEvidence one_by_one;
  bulk.add(-1, 3, 1.5);
  bulk.add(7, 2, 0.25);
  for (double q : {0.5, 0.25, 0.75}) one_by_one.add(-1, q);
  for (double q : {0.125, 0.125}) one_by_one.add(7, q);
  CHECK(one_by_one.lift() == Approx(bulk.lift()));
  CHECK(one_by_one.of(7).agreement == Approx(bulk.of(7).agreement));
}

TEST_CASE("label evidence: neighbours no better than chance abstain everywhere",
          "[label_evidence]") {
  // Ten balanced classes whose neighbours agree as often as chance (0.1),
  // but one class a little better: the dataset's lift keeps it from judging.
  LabelEvidence evidence;
  for (int c = 0; c < 9; ++c) evidence.add(c, 100, 10.0);
  evidence.add(9, 100, 40.0);  // class lift 0.33
  CHECK(evidence.of(9).lift > 0.25);
  CHECK(evidence.lift() < 0.25);
  CHECK(evidence.abstained().size() == 10);
}

TEST_CASE("label evidence: too few samples abstain; one class cannot be told apart",
          "[label_evidence]") {
  LabelEvidence few({0.25, 30});
  few.add(0, 29, 29.0);
  few.add(1, 100, 100.0);
  CHECK_FALSE(few.judges(0));
  CHECK(few.judges(1));
  LabelEvidence single;
  single.add(4, 500, 500.0);
  CHECK(single.lift() == 0.0);
  CHECK_FALSE(single.judges(4));
  CHECK(LabelEvidence().lift() == 0.0);
}

TEST_CASE("label evidence: bad options and sums are refused", "[label_evidence]") {
  CHECK_THROWS_AS(LabelEvidence({1.5, 30}), winnow::Error);
  CHECK_THROWS_AS(LabelEvidence({0.25, 0}), winnow::Error);
  LabelEvidence evidence;
  CHECK_THROWS_AS(evidence.add(0, 2, 3.0), winnow::Error);   // quality above 1 each
  CHECK_THROWS_AS(evidence.add(0, -1, 0.0), winnow::Error);  // negative count
}
