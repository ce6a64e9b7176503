// Agreement coefficients between raters of nominal labels: Krippendorff's
// alpha, Fleiss' kappa and Cohen's kappa (definitions and fixture values in
// docs/report-schema.md and the curation reference, section 5).
//
// A coefficient that is undefined for its input (no unit with two values, a
// single category so the expected disagreement is 0, unequal rater counts
// for Fleiss...) has no value and a note saying why: never NaN.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace winnow::curation::labels {

// Rated units in compressed form: unit u's labels (one per rating that was
// given; missing ratings are simply left out) are
// labels[offsets[u] .. offsets[u + 1]). Flat, so a million units cost two
// vectors rather than a million small ones.
struct LabelledUnits {
  std::vector<int> labels;
  std::vector<std::size_t> offsets{0};

  std::size_t size() const { return offsets.size() - 1; }
  std::size_t ratings(std::size_t unit) const { return offsets[unit + 1] - offsets[unit]; }
  const int* begin(std::size_t unit) const { return labels.data() + offsets[unit]; }
  const int* end(std::size_t unit) const { return labels.data() + offsets[unit + 1]; }

  void add_unit(const int* first, const int* last) {
    labels.insert(labels.end(), first, last);
    offsets.push_back(labels.size());
  }
  void add_unit(std::initializer_list<int> unit) { add_unit(unit.begin(), unit.end()); }
  void add_unit(const std::vector<int>& unit) { add_unit(unit.data(), unit.data() + unit.size()); }

  static LabelledUnits from(const std::vector<std::vector<int>>& units) {
    LabelledUnits out;
    for (const auto& unit : units) out.add_unit(unit);
    return out;
  }
};

struct AgreementResult {
  std::optional<double> value;  // empty when the coefficient is undefined
  std::size_t units = 0;        // units (or rated pairs, for Cohen) it is computed on
  std::string note;             // why `value` is empty; "" when it has one
};

// Krippendorff's alpha for nominal data: 1 - D_o / D_e from the coincidence
// matrix. Units with fewer than two values are not pairable and do not count,
// as Krippendorff defines; any number of raters per unit.
AgreementResult krippendorff_alpha_nominal(const LabelledUnits& units);

// Fleiss' kappa: every unit must have the same number n >= 2 of ratings
// (otherwise undefined, with a note giving the range found).
AgreementResult fleiss_kappa(const LabelledUnits& units);

// Cohen's kappa between two raters; rater_a[i] and rater_b[i] rated the same
// item. Throws winnow::Error when the two lists differ in length.
AgreementResult cohen_kappa(const std::vector<int>& rater_a, const std::vector<int>& rater_b);

}  // namespace winnow::curation::labels
