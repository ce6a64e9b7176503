// The cleanlab-style class table, confused pairs and health score on a
// hand-counted case.
#include <catch2/catch.hpp>

#include "winnow/curation/labels/label_health.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::labels;

TEST_CASE("label health: class table, confused pairs and health score", "[label_health]") {
  // (given, estimated): class 0 x5 correct, 0->1 x2, 1 x3 correct, 1->0 x1,
  // 2 x4 correct, 2->1 x1; class 3 never used. N = 16, issues = 4.
  LabelHealthCounter counter(4);
  auto add = [&](int n, std::size_t given, std::size_t estimated, std::optional<double> q) {
    for (int i = 0; i < n; ++i) counter.add(given, estimated, q);
  };
  add(5, 0, 0, 0.9);
  add(2, 0, 1, 0.2);
  add(3, 1, 1, std::nullopt);
  add(1, 1, 0, std::nullopt);
  add(4, 2, 2, 0.5);
  add(1, 2, 1, 0.5);
  const LabelHealth health = counter.finish();
  CHECK(health.samples == 16);
  CHECK(health.label_issues == 4);
  CHECK(*health.health_score == Approx(1.0 - 4.0 / 16.0));

  REQUIRE(health.classes.size() == 4);
  // Worst first: class 0 (2/7 noise), class 1 (1/4), class 2 (1/5); class 3 last.
  CHECK(health.classes[0].label == 0);
  CHECK(health.classes[1].label == 1);
  CHECK(health.classes[2].label == 2);
  CHECK(health.classes[3].label == 3);
  const ClassHealth& zero = health.classes[0];
  CHECK(zero.given == 7);
  CHECK(zero.label_issues == 2);
  CHECK(zero.inverse_label_issues == 1);
  CHECK(*zero.label_noise == Approx(2.0 / 7.0));
  CHECK(*zero.inverse_label_noise == Approx(1.0 / 6.0));
  CHECK(*zero.label_quality_score == Approx(5.0 / 7.0));
  CHECK(*zero.mean_label_quality == Approx((5 * 0.9 + 2 * 0.2) / 7.0));
  const ClassHealth& one = health.classes[1];
  CHECK(one.label_issues == 1);
  CHECK(one.inverse_label_issues == 3);  // 2 from class 0, 1 from class 2
  CHECK(*one.inverse_label_noise == Approx(3.0 / 6.0));
  CHECK_FALSE(one.mean_label_quality.has_value());
  CHECK_FALSE(one.mean_label_quality_note.empty());
  const ClassHealth& never = health.classes[3];
  CHECK(never.given == 0);
  CHECK_FALSE(never.label_noise.has_value());
  CHECK_FALSE(never.label_quality_score.has_value());
  CHECK_FALSE(never.inverse_label_noise.has_value());
  CHECK_FALSE(never.label_noise_note.empty());

  // Pairs: {0,1} 3 times, {1,2} once; {0,2} never.
  REQUIRE(health.confused_pairs.size() == 2);
  CHECK(health.confused_pairs[0].a == 0);
  CHECK(health.confused_pairs[0].b == 1);
  CHECK(health.confused_pairs[0].count == 3);
  CHECK(health.confused_pairs[0].joint_probability == Approx(3.0 / 16.0));
  CHECK(health.confused_pairs[1].count == 1);
  CHECK(counter.finish(1).confused_pairs.size() == 1);

  CHECK_THROWS_AS(counter.add(4, 0, std::nullopt), winnow::Error);
}

TEST_CASE("label health: no samples", "[label_health]") {
  const LabelHealth empty = LabelHealthCounter(0).finish();
  CHECK(empty.samples == 0);
  CHECK_FALSE(empty.health_score.has_value());
  CHECK_FALSE(empty.health_score_note.empty());
  CHECK(empty.classes.empty());
  CHECK(empty.confused_pairs.empty());
}
