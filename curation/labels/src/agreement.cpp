#include "winnow/curation/labels/agreement.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::curation::labels {

namespace {

// The distinct labels of `labels`, sorted: category c is categories[c].
class Categories {
 public:
  explicit Categories(std::vector<int> labels) : values_(std::move(labels)) {
    std::sort(values_.begin(), values_.end());
    values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
  }
  std::size_t size() const { return values_.size(); }
  std::size_t index(int label) const {
    return static_cast<std::size_t>(std::lower_bound(values_.begin(), values_.end(), label) -
                                    values_.begin());
  }

 private:
  std::vector<int> values_;
};

// Sum over categories of (ratings of the unit in that category)^2, from a
// sorted copy of the unit's labels (units are small).
std::int64_t sum_of_squared_counts(const int* first, const int* last, std::vector<int>& scratch) {
  scratch.assign(first, last);
  std::sort(scratch.begin(), scratch.end());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < scratch.size();) {
    std::size_t j = i;
    while (j < scratch.size() && scratch[j] == scratch[i]) ++j;
    const auto run = static_cast<std::int64_t>(j - i);
    sum += run * run;
    i = j;
  }
  return sum;
}

AgreementResult undefined(std::size_t units, std::string note) {
  AgreementResult result;
  result.units = units;
  result.note = std::move(note);
  return result;
}

}  // namespace

AgreementResult krippendorff_alpha_nominal(const LabelledUnits& units) {
  // Only pairable values (units with >= 2 of them) enter the coincidences.
  std::vector<int> pairable;
  std::size_t pairable_units = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (units.ratings(u) >= 2) {
      pairable.insert(pairable.end(), units.begin(u), units.end(u));
      ++pairable_units;
    }
  }
  if (pairable_units == 0) {
    return undefined(0, "no unit has two or more values");
  }
  const Categories categories(pairable);
  std::vector<std::int64_t> category_totals(categories.size(), 0);  // n_c
  for (int label : pairable) ++category_totals[categories.index(label)];
  if (categories.size() == 1) {
    return undefined(pairable_units,
                     "every value is the same category, so the expected disagreement is 0");
  }

  // Nominal metric: the off-diagonal coincidences of unit u sum to
  // (m_u^2 - sum_c n_uc^2) / (m_u - 1).
  double observed = 0.0;  // n * D_o
  std::vector<int> scratch;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const std::size_t m = units.ratings(u);
    if (m < 2) continue;
    const auto m64 = static_cast<std::int64_t>(m);
    const std::int64_t same = sum_of_squared_counts(units.begin(u), units.end(u), scratch);
    observed += static_cast<double>(m64 * m64 - same) / static_cast<double>(m64 - 1);
  }
  const auto n = static_cast<double>(pairable.size());
  double squared_totals = 0.0;
  for (std::int64_t total : category_totals) {
    squared_totals += static_cast<double>(total) * static_cast<double>(total);
  }
  const double expected = n * n - squared_totals;  // n (n - 1) * D_e
  AgreementResult result;
  result.units = pairable_units;
  // alpha = 1 - D_o / D_e = 1 - (n - 1) * observed / expected
  result.value = 1.0 - (n - 1.0) * observed / expected;
  return result;
}

AgreementResult fleiss_kappa(const LabelledUnits& units) {
  if (units.size() == 0) {
    return undefined(0, "no units");
  }
  std::size_t fewest = units.ratings(0);
  std::size_t most = fewest;
  for (std::size_t u = 1; u < units.size(); ++u) {
    fewest = std::min(fewest, units.ratings(u));
    most = std::max(most, units.ratings(u));
  }
  if (fewest != most) {
    return undefined(0, fmt::format("units have unequal numbers of ratings ({} to {}); Fleiss' "
                                    "kappa needs the same number for every unit",
                                    fewest, most));
  }
  const std::size_t raters = fewest;
  if (raters < 2) {
    return undefined(
        0, fmt::format("each unit has {} rating(s); Fleiss' kappa needs at least 2", raters));
  }
  const Categories categories(units.labels);
  if (categories.size() == 1) {
    return undefined(units.size(),
                     "every rating is the same category, so the expected agreement is 1");
  }
  std::vector<std::int64_t> category_totals(categories.size(), 0);
  for (int label : units.labels) ++category_totals[categories.index(label)];

  const auto n = static_cast<double>(raters);
  const auto unit_count = static_cast<double>(units.size());
  double agreement_sum = 0.0;  // sum_i P_i
  std::vector<int> scratch;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const std::int64_t same = sum_of_squared_counts(units.begin(u), units.end(u), scratch);
    agreement_sum += (static_cast<double>(same) - n) / (n * (n - 1.0));
  }
  const double mean_agreement = agreement_sum / unit_count;  // P-bar
  double chance = 0.0;                                       // P-bar_e
  for (std::int64_t total : category_totals) {
    const double p = static_cast<double>(total) / (unit_count * n);
    chance += p * p;
  }
  AgreementResult result;
  result.units = units.size();
  result.value = (mean_agreement - chance) / (1.0 - chance);
  return result;
}

AgreementResult cohen_kappa(const std::vector<int>& rater_a, const std::vector<int>& rater_b) {
  WINNOW_THROW_IF_NOT(rater_a.size() == rater_b.size(),
                      "Cohen's kappa needs one pair of ratings per item: rater A has {} "
                      "ratings, rater B {}",
                      rater_a.size(), rater_b.size());
  const std::size_t items = rater_a.size();
  if (items == 0) {
    return undefined(0, "no item was rated by both");
  }
  std::vector<int> all(rater_a);
  all.insert(all.end(), rater_b.begin(), rater_b.end());
  const Categories categories(std::move(all));
  std::vector<std::int64_t> totals_a(categories.size(), 0);
  std::vector<std::int64_t> totals_b(categories.size(), 0);
  std::int64_t agreeing = 0;
  for (std::size_t i = 0; i < items; ++i) {
    ++totals_a[categories.index(rater_a[i])];
    ++totals_b[categories.index(rater_b[i])];
    agreeing += rater_a[i] == rater_b[i] ? 1 : 0;
  }
  double chance_pairs = 0.0;  // n^2 * p_e
  for (std::size_t c = 0; c < categories.size(); ++c) {
    chance_pairs += static_cast<double>(totals_a[c]) * static_cast<double>(totals_b[c]);
  }
  const auto n = static_cast<double>(items);
  if (chance_pairs >= n * n) {  // both raters used one and the same category throughout
    return undefined(items,
                     "both raters always give the same single category, so the "
                     "expected agreement is 1");
  }
  const double observed = static_cast<double>(agreeing) / n;
  const double chance = chance_pairs / (n * n);
  AgreementResult result;
  result.units = items;
  result.value = (observed - chance) / (1.0 - chance);
  return result;
}

}  // namespace winnow::curation::labels
