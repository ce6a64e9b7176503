// Confident learning (Northcutt et al., "Confident Learning: Estimating
// Uncertainty in Dataset Labels"; cleanlab's find_label_issues): which given
// labels are likely wrong, from each sample's given label and a model's
// OUT-OF-SAMPLE predicted probabilities p̂ (N x K, e.g. from K-fold
// cross-validation). Notation: ỹ = given label, y* = latent true label,
// n_i = number of samples given label i.
//
//   1. thresholds   t_j = mean of p̂[j] over the samples given j (a class never
//                   given: 2, so it is never confident; floored at 1e-6).
//   2. confident    a sample's confident classes are {j : p̂[j] >= t_j - 1e-6};
//      joint C      one: counted in C[ỹ][j]; several: in C[ỹ][their argmax];
//                   none: not counted. Then every diagonal entry is forced to
//                   be >= 1. Rows are ỹ, columns y*.
//   3. calibration  row i of C scaled to total n_i, rounded to integers by the
//                   largest-remainder method so row totals stay exactly n_i
//                   (the matrix then sums to N): C_cal. Q = C_cal / N
//                   estimates the joint P(ỹ, y*).
//   4. prune counts per given class i: P[i][j] = C_cal[i][j] for j != i,
//                   lowered so that at least min_examples_per_class samples
//                   given i stay unflagged (the missing count is taken evenly
//                   from the non-zero off-diagonal entries of the row), then
//                   scaled by frac_noise and rounded (largest remainder).
//   5. filter       which samples are flagged (filter_by):
//        prune_by_noise_rate (default)  for every i != j, the P[i][j] samples
//                   given i with the largest margin p̂[j] - p̂[i];
//        prune_by_class  for every i, the sum_j P[i][j] samples given i with
//                   the smallest p̂[i];
//        both       flagged by both of the above;
//        confident_learning  the samples counted off the diagonal of C;
//        predicted_neq_given argmax p̂ != ỹ.
//      Finally a sample whose prediction is its given label is never flagged
//      (argmax ties are broken towards the given label, then the lower index).
//   6. scores       per-sample label quality in [0, 1], lower = more likely
//                   wrong: self_confidence p̂[ỹ] (default), or
//                   normalized_margin (p̂[ỹ] - max_{k != ỹ} p̂[k] + 1) / 2.
//      The suggested label of a flagged sample is its predicted class (argmax).
//
// num_label_issues is the off-diagonal sum of C (cleanlab's count estimate);
// the calibrated off-diagonal sum of C_cal is reported beside it.
//
// Differences from cleanlab 2.x, all in corner cases: with several confident
// classes cleanlab counts the sample under the overall argmax (this uses the
// argmax among the confident classes, as the paper defines it); cleanlab's
// rounding can leave a row one count off where this uses largest remainders;
// argmax ties prefer the given label.
//
// Input checks (winnow::Error naming the row and field): K >= 2, one label per
// row, labels in [0, K), every probability finite and >= 0, every row summing
// to 1 within 1e-3. Rows are NOT renormalised: a row that does not sum to 1
// usually means logits, a missing class column or a multi-label model, and
// renormalising would hide that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::curation {

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
  std::vector<double> thresholds;        // t_j, K
  std::vector<std::int64_t> label_counts;  // n_i, K
  ClassCounts confident_joint;           // C (diagonal forced >= 1)
  ClassCounts calibrated_joint;          // C_cal: row i sums to n_i, all to N
  std::vector<double> joint;             // Q = C_cal / N, K x K row-major
  ClassCounts prune_counts;              // P (off-diagonal only; diagonal 0)
  std::int64_t num_label_issues = 0;             // off-diagonal sum of C
  std::int64_t num_label_issues_calibrated = 0;  // off-diagonal sum of C_cal
  std::vector<bool> is_label_issue;      // N
  std::vector<double> label_quality;     // N, in [0, 1]
  std::vector<int> predicted_label;      // N, argmax p̂ (ties: given label, then lower index)

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

}  // namespace winnow::curation
