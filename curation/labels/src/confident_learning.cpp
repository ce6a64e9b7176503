#include "winnow/curation/labels/confident_learning.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "winnow/error.h"

namespace winnow::curation::labels {

namespace {

// A class that nobody was given gets this threshold: no probability reaches it.
constexpr double kNeverConfident = 2.0;
constexpr double kThresholdFloor = 1e-6;
// Slack on p̂[j] >= t_j, so that float rounding of the mean cannot make a
// sample miss its own class's threshold when every probability is equal.
constexpr double kThresholdSlack = 1e-6;

std::size_t cell(int i, int j, int k) {
  return static_cast<std::size_t>(i) * static_cast<std::size_t>(k) + static_cast<std::size_t>(j);
}

const float* row_of(const std::vector<float>& pred_probs, std::size_t n, int k) {
  return pred_probs.data() + n * static_cast<std::size_t>(k);
}

// argmax of p over the classes where `eligible` holds; ties go to `preferred`
// when it is eligible and tied, else to the lower index. -1 when none.
template <typename Eligible>
int argmax_preferring(const float* p, int k, int preferred, Eligible eligible) {
  int best = -1;
  for (int j = 0; j < k; ++j) {
    if (eligible(j) && (best < 0 || p[j] > p[best])) best = j;
  }
  if (best >= 0 && preferred >= 0 && preferred < k && eligible(preferred) &&
      p[preferred] == p[best]) {
    return preferred;
  }
  return best;
}

std::vector<std::int64_t> count_labels(const std::vector<int>& labels, int k) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(k), 0);
  for (int l : labels) ++counts[static_cast<std::size_t>(l)];
  return counts;
}

// The samples given each class, in sample order.
std::vector<std::vector<std::size_t>> samples_by_given_label(const std::vector<int>& labels,
                                                             int k) {
  std::vector<std::vector<std::size_t>> by(static_cast<std::size_t>(k));
  for (std::size_t n = 0; n < labels.size(); ++n)
    by[static_cast<std::size_t>(labels[n])].push_back(n);
  return by;
}

// The first `count` members of `members` by `better` (a strict order; ties
// are broken by sample index, so the choice is deterministic).
template <typename Key>
std::vector<std::size_t> top(std::vector<std::size_t> members, std::size_t count, Key key) {
  count = std::min(count, members.size());
  std::partial_sort(members.begin(), members.begin() + static_cast<long>(count), members.end(),
                    [&](std::size_t a, std::size_t b) {
                      const double ka = key(a), kb = key(b);
                      return ka != kb ? ka > kb : a < b;
                    });
  members.resize(count);
  return members;
}

}  // namespace

std::string_view to_string(LabelIssueFilter filter) {
  switch (filter) {
    case LabelIssueFilter::prune_by_noise_rate:
      return "prune_by_noise_rate";
    case LabelIssueFilter::prune_by_class:
      return "prune_by_class";
    case LabelIssueFilter::both:
      return "both";
    case LabelIssueFilter::confident_learning:
      return "confident_learning";
    case LabelIssueFilter::predicted_neq_given:
      return "predicted_neq_given";
  }
  return "?";
}

std::string_view to_string(LabelQualityMethod method) {
  switch (method) {
    case LabelQualityMethod::self_confidence:
      return "self_confidence";
    case LabelQualityMethod::normalized_margin:
      return "normalized_margin";
  }
  return "?";
}

LabelIssueFilter parse_label_issue_filter(std::string_view name) {
  for (LabelIssueFilter f :
       {LabelIssueFilter::prune_by_noise_rate, LabelIssueFilter::prune_by_class,
        LabelIssueFilter::both, LabelIssueFilter::confident_learning,
        LabelIssueFilter::predicted_neq_given}) {
    if (name == to_string(f)) return f;
  }
  WINNOW_THROW(
      "unknown filter_by '{}' (one of prune_by_noise_rate, prune_by_class, both, "
      "confident_learning, predicted_neq_given)",
      name);
}

LabelQualityMethod parse_label_quality_method(std::string_view name) {
  for (LabelQualityMethod m :
       {LabelQualityMethod::self_confidence, LabelQualityMethod::normalized_margin}) {
    if (name == to_string(m)) return m;
  }
  WINNOW_THROW("unknown label quality method '{}' (one of self_confidence, normalized_margin)",
               name);
}

std::int64_t ClassCounts::row_total(int given) const {
  std::int64_t total = 0;
  for (int j = 0; j < num_classes; ++j) total += at(given, j);
  return total;
}

std::int64_t ClassCounts::off_diagonal_total() const {
  std::int64_t total = 0;
  for (int i = 0; i < num_classes; ++i) {
    for (int j = 0; j < num_classes; ++j) {
      if (i != j) total += at(i, j);
    }
  }
  return total;
}

std::size_t ConfidentLearningResult::num_flagged() const {
  return static_cast<std::size_t>(std::count(is_label_issue.begin(), is_label_issue.end(), true));
}

void validate_confident_learning_input(const std::vector<int>& labels,
                                       const std::vector<float>& pred_probs, int num_classes) {
  WINNOW_THROW_IF_NOT(num_classes >= 2, "confident learning needs at least 2 classes, got {}",
                      num_classes);
  const auto k = static_cast<std::size_t>(num_classes);
  WINNOW_THROW_IF_NOT(pred_probs.size() == labels.size() * k,
                      "pred_probs has {} values, expected {} labels x {} classes = {}",
                      pred_probs.size(), labels.size(), k, labels.size() * k);
  for (std::size_t n = 0; n < labels.size(); ++n) {
    WINNOW_THROW_IF_NOT(labels[n] >= 0 && labels[n] < num_classes,
                        "label of row {} is {}, outside the {} classes [0, {})", n, labels[n], k,
                        k);
    const float* p = row_of(pred_probs, n, num_classes);
    double sum = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      WINNOW_THROW_IF_NOT(std::isfinite(p[j]), "pred_probs row {} class {} is not finite ({})", n,
                          j, p[j]);
      WINNOW_THROW_IF_NOT(p[j] >= 0.0f, "pred_probs row {} class {} is negative ({})", n, j, p[j]);
      sum += p[j];
    }
    WINNOW_THROW_IF_NOT(std::abs(sum - 1.0) <= kPredProbsSumTolerance,
                        "pred_probs row {} sums to {}, not 1 (within {}); pass probabilities, "
                        "not logits or multi-label scores",
                        n, sum, kPredProbsSumTolerance);
  }
}

std::vector<double> confident_thresholds(const std::vector<int>& labels,
                                         const std::vector<float>& pred_probs, int num_classes) {
  const auto k = static_cast<std::size_t>(num_classes);
  std::vector<double> sums(k, 0.0);
  const std::vector<std::int64_t> counts = count_labels(labels, num_classes);
  for (std::size_t n = 0; n < labels.size(); ++n) {
    sums[static_cast<std::size_t>(labels[n])] += row_of(pred_probs, n, num_classes)[labels[n]];
  }
  std::vector<double> t(k);
  for (std::size_t j = 0; j < k; ++j) {
    t[j] = counts[j] == 0 ? kNeverConfident
                          : std::max(kThresholdFloor, sums[j] / static_cast<double>(counts[j]));
  }
  return t;
}

ClassCounts confident_joint(const std::vector<int>& labels, const std::vector<float>& pred_probs,
                            int num_classes, const std::vector<double>& thresholds,
                            std::vector<int>* counted_as) {
  ClassCounts c{num_classes, std::vector<std::int64_t>(cell(num_classes, 0, num_classes), 0)};
  if (counted_as) counted_as->assign(labels.size(), -1);
  for (std::size_t n = 0; n < labels.size(); ++n) {
    const float* p = row_of(pred_probs, n, num_classes);
    auto confident = [&](int j) {
      return static_cast<double>(p[j]) >= thresholds[static_cast<std::size_t>(j)] - kThresholdSlack;
    };
    // One confident class: that one; several: the most probable of them; none: skipped.
    const int y = argmax_preferring(p, num_classes, labels[n], confident);
    if (y < 0) continue;
    ++c.counts[cell(labels[n], y, num_classes)];
    if (counted_as) (*counted_as)[n] = y;
  }
  // Every class keeps at least one confidently correct sample.
  for (int i = 0; i < num_classes; ++i) {
    std::int64_t& d = c.counts[cell(i, i, num_classes)];
    d = std::max<std::int64_t>(d, 1);
  }
  return c;
}

std::vector<std::int64_t> round_preserving_total(const std::vector<double>& values) {
  std::vector<std::int64_t> out(values.size());
  double total = 0.0;
  std::int64_t floors = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = static_cast<std::int64_t>(std::floor(values[i]));
    floors += out[i];
    total += values[i];
  }
  const auto missing = static_cast<std::size_t>(
      std::max<std::int64_t>(0, static_cast<std::int64_t>(std::llround(total)) - floors));
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return values[a] - std::floor(values[a]) > values[b] - std::floor(values[b]);
  });
  for (std::size_t r = 0; r < missing && r < order.size(); ++r) ++out[order[r]];
  return out;
}

ClassCounts calibrate_confident_joint(const ClassCounts& confident_joint,
                                      const std::vector<std::int64_t>& label_counts) {
  const int k = confident_joint.num_classes;
  ClassCounts cal{k, std::vector<std::int64_t>(confident_joint.counts.size(), 0)};
  std::vector<double> row(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    // Row total >= 1 (forced diagonal); scale it to n_i. The rows then sum to
    // N already, so cleanlab's second scaling (to a total of N) is a no-op.
    const double total = static_cast<double>(confident_joint.row_total(i));
    const double n_i = static_cast<double>(label_counts[static_cast<std::size_t>(i)]);
    for (int j = 0; j < k; ++j) {
      row[static_cast<std::size_t>(j)] =
          total > 0.0 ? static_cast<double>(confident_joint.at(i, j)) * n_i / total : 0.0;
    }
    const std::vector<std::int64_t> rounded = round_preserving_total(row);
    std::copy(rounded.begin(), rounded.end(),
              cal.counts.begin() + static_cast<long>(cell(i, 0, k)));
  }
  return cal;
}

ClassCounts prune_counts(const ClassCounts& calibrated_joint, int min_examples_per_class,
                         double frac_noise) {
  WINNOW_THROW_IF_NOT(min_examples_per_class >= 0, "min_examples_per_class={} must be >= 0",
                      min_examples_per_class);
  WINNOW_THROW_IF_NOT(std::isfinite(frac_noise) && frac_noise >= 0.0 && frac_noise <= 1.0,
                      "frac_noise={} must be in [0, 1]", frac_noise);
  const int k = calibrated_joint.num_classes;
  ClassCounts prune{k, std::vector<std::int64_t>(calibrated_joint.counts.size(), 0)};
  std::vector<double> off(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    const std::int64_t n_i = calibrated_joint.row_total(i);
    const std::int64_t keep = std::min<std::int64_t>(min_examples_per_class, n_i);
    const std::int64_t diagonal = calibrated_joint.at(i, i);
    int nonzero = 0;
    for (int j = 0; j < k; ++j) {
      off[static_cast<std::size_t>(j)] =
          j == i ? 0.0 : static_cast<double>(calibrated_joint.at(i, j));
      if (j != i && calibrated_joint.at(i, j) > 0) ++nonzero;
    }
    // Too few kept as correct: take the shortfall evenly from the noise cells.
    if (diagonal < keep && nonzero > 0) {
      const double cut = static_cast<double>(keep - diagonal) / nonzero;
      for (double& v : off) v = v > 0.0 ? std::max(0.0, v - cut) : 0.0;
    }
    for (double& v : off) v *= frac_noise;
    std::vector<std::int64_t> rounded = round_preserving_total(off);
    // Clamping above can leave the row over its allowance: trim the largest.
    std::int64_t total = std::accumulate(rounded.begin(), rounded.end(), std::int64_t{0});
    while (total > n_i - keep) {
      auto largest = std::max_element(rounded.begin(), rounded.end());
      --*largest;
      --total;
    }
    std::copy(rounded.begin(), rounded.end(),
              prune.counts.begin() + static_cast<long>(cell(i, 0, k)));
  }
  return prune;
}

std::vector<double> label_quality_scores(const std::vector<int>& labels,
                                         const std::vector<float>& pred_probs, int num_classes,
                                         LabelQualityMethod method) {
  std::vector<double> scores(labels.size());
  for (std::size_t n = 0; n < labels.size(); ++n) {
    const float* p = row_of(pred_probs, n, num_classes);
    const double self = p[labels[n]];
    if (method == LabelQualityMethod::self_confidence) {
      scores[n] = std::clamp(self, 0.0, 1.0);
      continue;
    }
    double other = 0.0;
    for (int j = 0; j < num_classes; ++j) {
      if (j != labels[n]) other = std::max(other, static_cast<double>(p[j]));
    }
    scores[n] = std::clamp((self - other + 1.0) / 2.0, 0.0, 1.0);
  }
  return scores;
}

namespace {

// Which samples the chosen filter flags (options.filter_by, prune counts and
// predictions already in `r`), then the rule every filter shares: a sample whose
// prediction is its given label is never flagged; predicted_neq_given flags
// exactly the others.
std::vector<bool> flag_label_issues(const ConfidentLearningResult& r,
                                    const std::vector<int>& labels,
                                    const std::vector<float>& pred_probs,
                                    const std::vector<int>& counted_as) {
  const int k = r.num_classes;
  const std::size_t n_samples = labels.size();
  const auto by_label = samples_by_given_label(labels, k);
  auto prob = [&](std::size_t n, int j) {
    return static_cast<double>(row_of(pred_probs, n, k)[j]);
  };
  // Prune by noise rate: P[i][j] samples given i that look most like j.
  auto by_noise_rate = [&]() {
    std::vector<bool> flagged(n_samples, false);
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < k; ++j) {
        const std::int64_t count = r.prune_counts.at(i, j);
        if (j == i || count < 1) continue;
        for (std::size_t n :
             top(by_label[static_cast<std::size_t>(i)], static_cast<std::size_t>(count),
                 [&](std::size_t s) { return prob(s, j) - prob(s, i); })) {
          flagged[n] = true;
        }
      }
    }
    return flagged;
  };
  // Prune by class: the sum_j P[i][j] samples given i least confident in i.
  auto by_class = [&]() {
    std::vector<bool> flagged(n_samples, false);
    for (int i = 0; i < k; ++i) {
      const std::int64_t count = r.prune_counts.row_total(i);
      if (count < 1) continue;
      for (std::size_t n :
           top(by_label[static_cast<std::size_t>(i)], static_cast<std::size_t>(count),
               [&](std::size_t s) { return -prob(s, i); })) {
        flagged[n] = true;
      }
    }
    return flagged;
  };

  std::vector<bool> flagged;
  switch (r.options.filter_by) {
    case LabelIssueFilter::prune_by_noise_rate:
      flagged = by_noise_rate();
      break;
    case LabelIssueFilter::prune_by_class:
      flagged = by_class();
      break;
    case LabelIssueFilter::both: {
      flagged = by_noise_rate();
      const std::vector<bool> other = by_class();
      for (std::size_t n = 0; n < n_samples; ++n) flagged[n] = flagged[n] && other[n];
      break;
    }
    case LabelIssueFilter::confident_learning:
      flagged.assign(n_samples, false);
      for (std::size_t n = 0; n < n_samples; ++n) {
        flagged[n] = counted_as[n] >= 0 && counted_as[n] != labels[n];
      }
      break;
    case LabelIssueFilter::predicted_neq_given:
      flagged.assign(n_samples, false);
      break;  // the rule below decides
  }
  for (std::size_t n = 0; n < n_samples; ++n) {
    if (r.options.filter_by == LabelIssueFilter::predicted_neq_given) {
      flagged[n] = r.predicted_label[n] != labels[n];
    } else if (r.predicted_label[n] == labels[n]) {
      flagged[n] = false;
    }
  }
  return flagged;
}

}  // namespace

ConfidentLearningResult find_label_issues(const std::vector<int>& labels,
                                          const std::vector<float>& pred_probs, int num_classes,
                                          const ConfidentLearningOptions& options) {
  validate_confident_learning_input(labels, pred_probs, num_classes);
  const int k = num_classes;
  const std::size_t n_samples = labels.size();
  ConfidentLearningResult r;
  r.num_samples = n_samples;
  r.num_classes = k;
  r.options = options;
  r.label_counts = count_labels(labels, k);
  r.thresholds = confident_thresholds(labels, pred_probs, k);
  std::vector<int> counted_as;
  r.confident_joint = confident_joint(labels, pred_probs, k, r.thresholds, &counted_as);
  r.calibrated_joint = calibrate_confident_joint(r.confident_joint, r.label_counts);
  r.joint.assign(r.calibrated_joint.counts.size(), 0.0);
  if (n_samples > 0) {
    for (std::size_t c = 0; c < r.joint.size(); ++c) {
      r.joint[c] =
          static_cast<double>(r.calibrated_joint.counts[c]) / static_cast<double>(n_samples);
    }
  }
  r.num_label_issues = r.confident_joint.off_diagonal_total();
  r.num_label_issues_calibrated = r.calibrated_joint.off_diagonal_total();
  r.prune_counts =
      prune_counts(r.calibrated_joint, options.min_examples_per_class, options.frac_noise);
  r.label_quality = label_quality_scores(labels, pred_probs, k, options.quality);
  r.predicted_label.resize(n_samples);
  for (std::size_t n = 0; n < n_samples; ++n) {
    r.predicted_label[n] =
        argmax_preferring(row_of(pred_probs, n, k), k, labels[n], [](int) { return true; });
  }

  r.is_label_issue = flag_label_issues(r, labels, pred_probs, counted_as);
  return r;
}

}  // namespace winnow::curation::labels
