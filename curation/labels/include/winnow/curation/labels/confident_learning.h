// Confident learning (Northcutt et al.; cleanlab's find_label_issues): which
// given labels are likely wrong, from a model's OUT-OF-SAMPLE predicted
// probabilities p̂ (N x K, e.g. K-fold cross-validation). Steps 1-6:
// thresholds, confident joint, calibration, prune counts, filter, scores.
// Input checks (winnow::Error naming the row and field): K >= 2, one label per
// row in [0, K), probabilities finite and >= 0, rows summing to 1 within 1e-3.
// Rows are never renormalised (a bad sum usually means logits).
// Details: docs/curation.md#confident-learning---pred-probs
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::curation::labels {

enum class LabelIssueFilter {
  prune_by_noise_rate,
  prune_by_class,
  both,
  confident_learning,
  predicted_neq_given,
};

enum class LabelQualityMethod {
  self_confidence,
  normalized_margin,
};

std::string_view to_string(LabelIssueFilter filter);
std::string_view to_string(LabelQualityMethod method);
// Inverses of to_string; throw winnow::Error listing the valid names.
LabelIssueFilter parse_label_issue_filter(std::string_view name);
LabelQualityMethod parse_label_quality_method(std::string_view name);

struct ConfidentLearningOptions {
  LabelIssueFilter filter_by = LabelIssueFilter::prune_by_noise_rate;
  LabelQualityMethod quality = LabelQualityMethod::self_confidence;
  int min_examples_per_class = 1;  // samples of each given class never flagged by pruning
  double frac_noise = 1.0;         // share of the estimated issues to flag, in [0, 1]
};

// Row sums of pred_probs must be within this of 1.
constexpr double kPredProbsSumTolerance = 1e-3;

// A K x K matrix of counts, row-major: at(given, true).
struct ClassCounts {
  int num_classes = 0;
  std::vector<std::int64_t> counts;

  std::int64_t at(int given, int true_label) const {
    return counts[static_cast<std::size_t>(given) * static_cast<std::size_t>(num_classes) +
                  static_cast<std::size_t>(true_label)];
  }
  std::int64_t row_total(int given) const;
  std::int64_t off_diagonal_total() const;
};

struct ConfidentLearningResult {
  std::size_t num_samples = 0;
  int num_classes = 0;
  ConfidentLearningOptions options;
  std::vector<double> thresholds;                // t_j, K
  std::vector<std::int64_t> label_counts;        // n_i, K
  ClassCounts confident_joint;                   // C (diagonal forced >= 1)
  ClassCounts calibrated_joint;                  // C_cal: row i sums to n_i, all to N
  std::vector<double> joint;                     // Q = C_cal / N, K x K row-major
  ClassCounts prune_counts;                      // P (off-diagonal only; diagonal 0)
  std::int64_t num_label_issues = 0;             // off-diagonal sum of C
  std::int64_t num_label_issues_calibrated = 0;  // off-diagonal sum of C_cal
  std::vector<bool> is_label_issue;              // N
  std::vector<double> label_quality;             // N, in [0, 1]
  std::vector<int> predicted_label;  // N, argmax p̂ (ties: given label, then lower index)

  std::size_t num_flagged() const;
};

// Throws winnow::Error naming the first bad row/field (see the header comment).
void validate_confident_learning_input(const std::vector<int>& labels,
                                       const std::vector<float>& pred_probs, int num_classes);

// The building blocks, in order (inputs are assumed validated).
std::vector<double> confident_thresholds(const std::vector<int>& labels,
                                         const std::vector<float>& pred_probs, int num_classes);
// C, and for each sample the class it was counted under (-1: not counted).
ClassCounts confident_joint(const std::vector<int>& labels, const std::vector<float>& pred_probs,
                            int num_classes, const std::vector<double>& thresholds,
                            std::vector<int>* counted_as = nullptr);
ClassCounts calibrate_confident_joint(const ClassCounts& confident_joint,
                                      const std::vector<std::int64_t>& label_counts);
ClassCounts prune_counts(const ClassCounts& calibrated_joint, int min_examples_per_class,
                         double frac_noise);
std::vector<double> label_quality_scores(const std::vector<int>& labels,
                                         const std::vector<float>& pred_probs, int num_classes,
                                         LabelQualityMethod method);

// Non-negative reals rounded to integers summing to round(sum of values):
// floors, then +1 for the largest fractional parts (ties: lower index).
std::vector<std::int64_t> round_preserving_total(const std::vector<double>& values);

// Validates, then runs steps 1-6 (see the header comment).
ConfidentLearningResult find_label_issues(const std::vector<int>& labels,
                                          const std::vector<float>& pred_probs, int num_classes,
                                          const ConfidentLearningOptions& options = {});

}  // namespace winnow::curation::labels
