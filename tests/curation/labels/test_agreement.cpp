// Agreement coefficients against published worked examples, hand-computed
// cases and their limits (identical raters, independent random raters,
// missing values, degenerate input).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "winnow/curation/labels/agreement.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::labels;

namespace {

// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": coders
// A, B, C over 15 units, values 1-4, 0 = missing. Units 2 and 14 have no
// value and unit 1 only one: they are not pairable.
LabelledUnits krippendorff_example() {
  const int a[15] = {0, 0, 0, 0, 0, 3, 4, 1, 2, 1, 1, 3, 3, 0, 3};
  const int b[15] = {1, 0, 2, 1, 3, 3, 4, 3, 0, 0, 0, 0, 0, 0, 0};
  const int c[15] = {0, 0, 2, 1, 3, 4, 4, 0, 2, 1, 1, 3, 3, 0, 4};
  LabelledUnits units;
  for (int u = 0; u < 15; ++u) {
    std::vector<int> values;
    for (int v : {a[u], b[u], c[u]}) {
      if (v != 0) values.push_back(v);
    }
    units.add_unit(values);
  }
  return units;
}

// Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters each, 5
// categories; n_ij = raters putting subject i in category j.
LabelledUnits fleiss_example() {
  const int table[10][5] = {{0, 0, 0, 0, 14}, {0, 2, 6, 4, 2}, {0, 0, 3, 5, 6}, {0, 3, 9, 2, 0},
                            {2, 2, 8, 1, 1},  {7, 7, 0, 0, 0}, {3, 2, 6, 3, 0}, {2, 5, 3, 2, 2},
                            {6, 5, 2, 1, 0},  {0, 2, 2, 3, 7}};
  LabelledUnits units;
  for (const auto& row : table) {
    std::vector<int> ratings;
    for (int category = 0; category < 5; ++category) {
      ratings.insert(ratings.end(), static_cast<std::size_t>(row[category]), category + 1);
    }
    units.add_unit(ratings);
  }
  return units;
}

}  // namespace

TEST_CASE("Krippendorff's alpha: the canonical 3-coder x 15-unit nominal example", "[agreement]") {
  const AgreementResult alpha = krippendorff_alpha_nominal(krippendorff_example());
  REQUIRE(alpha.value.has_value());
  CHECK(*alpha.value == Approx(0.691358).margin(1e-6));
  CHECK(alpha.units == 12);  // 15 units less the 3 with fewer than two values
  CHECK(alpha.note.empty());
}

TEST_CASE("Krippendorff's alpha: hand-computed cases and missing values", "[agreement]") {
  // {1,1}, {2,2}, {1,2}: n = 6, n*D_o = 2, n(n-1)*D_e = 36 - 18 -> 1 - 5*2/18 = 4/9.
  LabelledUnits units = LabelledUnits::from({{1, 1}, {2, 2}, {1, 2}});
  CHECK(*krippendorff_alpha_nominal(units).value == Approx(4.0 / 9.0).epsilon(1e-12));
  // Units with one value or none are not pairable: nothing changes.
  units.add_unit({3});
  units.add_unit(std::vector<int>{});
  const AgreementResult with_missing = krippendorff_alpha_nominal(units);
  CHECK(*with_missing.value == Approx(4.0 / 9.0).epsilon(1e-12));
  CHECK(with_missing.units == 3);
  // A unit of three: {1,1,2} adds (9 - 5)/2 = 2 to n*D_o; n = 9, n_1 = 5, n_2 = 4:
  // 1 - 8 * 4 / (81 - 41) = 0.2.
  units.add_unit({1, 1, 2});
  CHECK(*krippendorff_alpha_nominal(units).value == Approx(0.2).epsilon(1e-12));
  // Labels are categories, not numbers: renaming them changes nothing.
  CHECK(*krippendorff_alpha_nominal(LabelledUnits::from({{-7, -7}, {40, 40}, {-7, 40}})).value ==
        Approx(4.0 / 9.0).epsilon(1e-12));
}

TEST_CASE("agreement: identical raters give 1", "[agreement]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> label(0, 4);
  LabelledUnits three;
  std::vector<int> a;
  for (int i = 0; i < 200; ++i) {
    const int l = label(rng);
    three.add_unit({l, l, l});
    a.push_back(l);
  }
  CHECK(*krippendorff_alpha_nominal(three).value == Approx(1.0));
  CHECK(*fleiss_kappa(three).value == Approx(1.0));
  CHECK(*cohen_kappa(a, a).value == Approx(1.0));
}

TEST_CASE("agreement: independent random raters give about 0", "[agreement]") {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> label(0, 3);
  LabelledUnits units;
  std::vector<int> a, b;
  for (int i = 0; i < 5000; ++i) {
    const int x = label(rng), y = label(rng), z = label(rng);
    units.add_unit({x, y, z});
    a.push_back(x);
    b.push_back(y);
  }
  const double alpha = *krippendorff_alpha_nominal(units).value;
  const double fleiss = *fleiss_kappa(units).value;
  const double cohen = *cohen_kappa(a, b).value;
  CHECK(std::abs(alpha) < 0.05);
  CHECK(std::abs(fleiss) < 0.05);
  CHECK(std::abs(cohen) < 0.05);
  // ... while a rater who copies the other 70% of the time is clearly above 0.
  std::vector<int> copier = a;
  for (std::size_t i = 0; i < copier.size(); ++i) {
    if (i % 10 >= 7) copier[i] = label(rng);
  }
  CHECK(*cohen_kappa(a, copier).value > 0.6);
}

TEST_CASE("Fleiss' kappa: Fleiss' 1971 table (10 subjects x 14 raters)", "[agreement]") {
  const AgreementResult kappa = fleiss_kappa(fleiss_example());
  REQUIRE(kappa.value.has_value());
  CHECK(*kappa.value == Approx(0.2099).margin(5e-5));
  CHECK(kappa.units == 10);
}

TEST_CASE("Fleiss' kappa: hand-computed case and unequal rater counts", "[agreement]") {
  // {0,0}, {1,1}, {0,1}: P = (1 + 1 + 0)/3, p = (1/2, 1/2), P_e = 1/2 -> (2/3 - 1/2)/(1/2) = 1/3.
  CHECK(*fleiss_kappa(LabelledUnits::from({{0, 0}, {1, 1}, {0, 1}})).value ==
        Approx(1.0 / 3.0).epsilon(1e-12));
  const AgreementResult unequal = fleiss_kappa(LabelledUnits::from({{0, 0}, {1, 1, 1}}));
  CHECK_FALSE(unequal.value.has_value());
  CHECK(unequal.note.find("unequal numbers of ratings (2 to 3)") != std::string::npos);
  const AgreementResult single = fleiss_kappa(LabelledUnits::from({{0}, {1}}));
  CHECK_FALSE(single.value.has_value());
  CHECK(single.note.find("at least 2") != std::string::npos);
}

TEST_CASE("Cohen's kappa: the 2x2 textbook case", "[agreement]") {
  // 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15:
  // p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> kappa = 0.4.
  std::vector<int> a, b;
  auto add = [&](int n, int x, int y) {
    a.insert(a.end(), static_cast<std::size_t>(n), x);
    b.insert(b.end(), static_cast<std::size_t>(n), y);
  };
  add(20, 1, 1);
  add(5, 1, 0);
  add(10, 0, 1);
  add(15, 0, 0);
  const AgreementResult kappa = cohen_kappa(a, b);
  CHECK(*kappa.value == Approx(0.4).epsilon(1e-12));
  CHECK(kappa.units == 50);
  CHECK_THROWS_AS(cohen_kappa({1, 2}, {1}), winnow::Error);
}

TEST_CASE("agreement: degenerate input gets a note, never NaN", "[agreement]") {
  const AgreementResult none = krippendorff_alpha_nominal(LabelledUnits{});
  CHECK_FALSE(none.value.has_value());
  CHECK(none.note == "no unit has two or more values");
  const AgreementResult singles = krippendorff_alpha_nominal(LabelledUnits::from({{1}, {2}, {}}));
  CHECK_FALSE(singles.value.has_value());
  CHECK(singles.units == 0);
  const AgreementResult one_category =
      krippendorff_alpha_nominal(LabelledUnits::from({{5, 5}, {5, 5, 5}}));
  CHECK_FALSE(one_category.value.has_value());
  CHECK(one_category.units == 2);
  CHECK(one_category.note.find("expected disagreement is 0") != std::string::npos);
  CHECK_FALSE(fleiss_kappa(LabelledUnits{}).value.has_value());
  CHECK_FALSE(fleiss_kappa(LabelledUnits::from({{2, 2}, {2, 2}})).value.has_value());
  CHECK_FALSE(cohen_kappa({}, {}).value.has_value());
  const AgreementResult same = cohen_kappa({3, 3, 3}, {3, 3, 3});
  CHECK_FALSE(same.value.has_value());
  CHECK_FALSE(same.note.empty());
  // One rater constant, the other not: p_e < 1, defined (and 0).
  CHECK(*cohen_kappa({3, 3, 3, 3}, {3, 1, 3, 1}).value == Approx(0.0).margin(1e-12));
}
