// Dawid-Skene EM (Dawid & Skene 1979): estimates each annotator's confusion
// matrix and every item's true-label posterior from redundant labels, with no
// ground truth; behind consensus labels and the report's annotator accuracies.
// Convergence is judged on the parameters (priors, confusion entries), not the
// posteriors. Flat arrays: an iteration touches each annotation once, so
// millions of annotations stay cheap.
// Details: docs/curation.md#dawid-skene-em
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <cstdint>
#include <vector>

namespace winnow::curation::labels {

// Items and their annotations in compressed form: item i's annotations are
// [offsets[i], offsets[i + 1]); annotation a was given by annotator[a]
// (0..annotators-1) and is label[a] (0..classes-1).
struct CrowdLabels {
  std::size_t classes = 0;
  std::size_t annotators = 0;
  std::vector<std::size_t> offsets{0};
  std::vector<int> annotator;
  std::vector<int> label;

  std::size_t items() const { return offsets.size() - 1; }
  std::size_t annotations() const { return label.size(); }

  // Appends one item with its (annotator, label) answers.
  void add_item(const std::vector<std::pair<int, int>>& answers) {
    for (const auto& [who, what] : answers) {
      annotator.push_back(who);
      label.push_back(what);
    }
    offsets.push_back(label.size());
  }
};

struct DawidSkeneOptions {
  int max_iterations = 100;
  double tolerance = 1e-5;  // on the largest change of any prior or confusion entry
  double smoothing = 0.01;  // pseudo-count added to every confusion cell and prior
  // Pseudo-answers added to the diagonal of every annotator's confusion, per
  // true class: a Dirichlet prior that takes each annotator to be right more
  // often than not until his answers say otherwise. 0: none (the report's
  // estimates). With few overlapping answers per annotator (an annotator
  // asked only about hard items), it keeps the estimate from sliding into a
  // solution that reads his errors as the items' classes.
  double diagonal_prior = 0.0;
  // The most confusion cells (annotators x classes x classes) the full model
  // keeps. Past it (hundreds of classes and annotators) each annotator gets
  // the one-coin model instead: one accuracy, the errors spread evenly over
  // the other classes, so memory grows with annotators + items x classes.
  std::size_t max_confusion_cells = std::size_t{1} << 22;
};

struct DawidSkeneResult {
  std::size_t classes = 0;
  std::size_t annotators = 0;
  std::vector<double> priors;               // [c]
  std::vector<double> confusion;            // [w][c][k]: P(label k | true class c), rows sum to 1
                                            // (empty for the one-coin model)
  bool one_coin = false;                    // each annotator one accuracy (see the options)
  std::vector<double> accuracy;             // [w]: the one-coin model's P(label = true class)
  std::vector<double> expected_accuracy;    // [w]: sum_c p[c] * e_w[c][c]
  std::vector<int> consensus;               // [item]: argmax posterior (first class on ties)
  std::vector<double> consensus_posterior;  // [item]: that posterior
  int iterations = 0;                       // EM rounds (M-step then E-step) run
  bool converged = false;
  // Largest change of a prior or confusion entry in the last round (0 after a
  // single round, which has nothing to compare with).
  double final_change = 0.0;

  double confusion_at(std::size_t annotator, std::size_t true_class, std::size_t given) const {
    if (one_coin) {
      const double right = accuracy[annotator];
      return given == true_class ? right : (1.0 - right) / static_cast<double>(classes - 1);
    }
    return confusion[(annotator * classes + true_class) * classes + given];
  }
};

// Throws winnow::Error on inconsistent input (an annotator or label out of
// range, offsets that do not cover the annotations, no classes) or options
// (max_iterations < 1, tolerance or smoothing negative or not finite, zero
// smoothing). An item without annotations gets the prior as its posterior.
DawidSkeneResult dawid_skene(const CrowdLabels& labels, const DawidSkeneOptions& options = {});

// The estimated model applied to one item, as consensus labels, the report
// and annotate-next read it. Logs are floored at 1e-300, so a cell the
// answers never used stays finite.
//   class_log_prior:       log p[c];
//   answer_log_likelihood: log e_w[c][k] of answer `answer` (its annotator w,
//                          its label k) if the item were of class c;
//   item_log_posterior:    log p[c] + the item's answers' log likelihoods,
//                          unnormalised (`out` gets `classes` values);
//   item_posterior:        the same normalised to sum to 1.
double class_log_prior(const DawidSkeneResult& result, std::size_t c);
double answer_log_likelihood(const DawidSkeneResult& result, const CrowdLabels& labels,
                             std::size_t answer, std::size_t c);
void item_log_posterior(const DawidSkeneResult& result, const CrowdLabels& labels, std::size_t item,
                        std::vector<double>& out);
std::vector<double> item_posterior(const DawidSkeneResult& result, const CrowdLabels& labels,
                                   std::size_t item);

// The label with the most votes (votes by label), the smallest label on
// ties unless `on_tie` is among the tied; empty without votes. The rule a
// sample's label follows from its annotations (at import, after a later
// round, in export's `majority`); the consensus passes its own label as
// `on_tie` for the label the neighbours vote with.
std::optional<std::int64_t> majority_label(const std::map<std::int64_t, std::int64_t>& votes,
                                           std::optional<std::int64_t> on_tie = std::nullopt);

// The plain majority vote of every item (first class on ties; -1 for an item
// without annotations), the baseline Dawid-Skene is compared with.
std::vector<int> majority_vote(const CrowdLabels& labels);

}  // namespace winnow::curation::labels
