#include "winnow/curation/labels/label_health.h"

#include <algorithm>
#include <tuple>

#include "winnow/error.h"

namespace winnow::curation::labels {

LabelHealthCounter::LabelHealthCounter(std::size_t classes)
    : classes_(classes),
      counts_(classes * classes, 0),
      quality_sum_(classes, 0.0),
      quality_count_(classes, 0) {}

void LabelHealthCounter::add(std::size_t given, std::size_t estimated,
                             std::optional<double> quality) {
  WINNOW_THROW_IF_NOT(given < classes_ && estimated < classes_,
                      "label health: class indices ({}, {}) must be below the number of "
                      "classes ({})",
                      given, estimated, classes_);
  ++counts_[given * classes_ + estimated];
  if (quality) {
    quality_sum_[given] += *quality;
    ++quality_count_[given];
  }
}

LabelHealth LabelHealthCounter::finish(std::size_t max_pairs,
                                       const std::vector<std::size_t>& pair_order) const {
  const std::size_t K = classes_;
  LabelHealth health;
  health.counts = counts_;
  std::vector<std::int64_t> given(K, 0);
  std::vector<std::int64_t> estimated(K, 0);
  for (std::size_t g = 0; g < K; ++g) {
    for (std::size_t e = 0; e < K; ++e) {
      const std::int64_t n = counts_[g * K + e];
      given[g] += n;
      estimated[e] += n;
      health.samples += n;
      if (g != e) health.label_issues += n;
    }
  }
  if (health.samples > 0) {
    health.health_score =
        1.0 - static_cast<double>(health.label_issues) / static_cast<double>(health.samples);
  } else {
    health.health_score_note = "no judged labelled sample";
  }

  for (std::size_t k = 0; k < K; ++k) {
    ClassHealth row;
    row.label = k;
    row.given = given[k];
    row.estimated = estimated[k];
    row.label_issues = given[k] - counts_[k * K + k];
    row.inverse_label_issues = estimated[k] - counts_[k * K + k];
    if (row.given > 0) {
      row.label_noise = static_cast<double>(row.label_issues) / static_cast<double>(row.given);
      row.label_quality_score = 1.0 - *row.label_noise;
    } else {
      row.label_noise_note = "no judged sample has this given label";
    }
    if (row.estimated > 0) {
      row.inverse_label_noise =
          static_cast<double>(row.inverse_label_issues) / static_cast<double>(row.estimated);
    } else {
      row.inverse_label_noise_note = "no judged sample is estimated to be of this class";
    }
    if (quality_count_[k] > 0) {
      row.mean_label_quality = quality_sum_[k] / static_cast<double>(quality_count_[k]);
    } else {
      row.mean_label_quality_note = "no sample of this class has a stored label-quality score";
    }
    health.classes.push_back(row);
  }
  // Worst first; classes with no score (never given) last.
  std::stable_sort(
      health.classes.begin(), health.classes.end(), [](const ClassHealth& x, const ClassHealth& y) {
        if (x.label_quality_score.has_value() != y.label_quality_score.has_value()) {
          return x.label_quality_score.has_value();
        }
        return x.label_quality_score.value_or(0.0) < y.label_quality_score.value_or(0.0);
      });

  const auto rank = [&](std::size_t k) { return pair_order.empty() ? k : pair_order[k]; };
  for (std::size_t a = 0; a < K; ++a) {
    for (std::size_t b = a + 1; b < K; ++b) {
      const std::int64_t n = counts_[a * K + b] + counts_[b * K + a];
      if (n == 0) continue;
      ConfusedPair pair;
      // a before b in the caller's order (e.g. by name).
      pair.a = rank(a) <= rank(b) ? a : b;
      pair.b = rank(a) <= rank(b) ? b : a;
      pair.count = n;
      pair.joint_probability = static_cast<double>(n) / static_cast<double>(health.samples);
      health.confused_pairs.push_back(pair);
    }
  }
  std::sort(health.confused_pairs.begin(), health.confused_pairs.end(),
            [&](const ConfusedPair& x, const ConfusedPair& y) {
              return std::make_tuple(-x.count, rank(x.a), rank(x.b)) <
                     std::make_tuple(-y.count, rank(y.a), rank(y.b));
            });
  if (health.confused_pairs.size() > max_pairs) health.confused_pairs.resize(max_pairs);
  return health;
}

}  // namespace winnow::curation::labels
