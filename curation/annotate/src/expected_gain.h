// The value of one more label: how much it is expected to raise the
// probability that an item's consensus (its most probable class) is right.
#pragma once

#include <cstddef>
#include <vector>

namespace winnow::curation::annotate {

// For an item with class posterior `p` (K values, summing to 1) and an
// annotator with confusion `confusion` (K x K, row c: P(answer | class c)):
//   sum over answers l of max_c p[c] * confusion[c][l]  -  max_c p[c],
// the expected accuracy of the item's consensus after his answer, less its
// accuracy now. Never negative; 0 for an annotator who answers at random.
double expected_accuracy_gain(const std::vector<double>& p, const std::vector<double>& confusion);

// The same answer's expected increase of the posterior's purity sum_c p[c]^2
// (the chance a label drawn from the posterior is right). Positive for any
// informative annotator, also where one answer cannot change the consensus
// yet (expected_accuracy_gain is 0 there): the tie-breaker between such items.
double expected_purity_gain(const std::vector<double>& p, const std::vector<double>& confusion);

// What a task is worth: the accuracy gain, plus kPurityWeight times the
// purity gain so that the items one answer cannot decide yet are ranked by
// how much it would settle them.
inline constexpr double kPurityWeight = 0.1;
double task_value(const std::vector<double>& p, const std::vector<double>& confusion);

// `estimated` (K x K) shrunk towards the prior annotator (accuracy
// `prior_accuracy` on every class, the rest spread evenly) as if the prior
// were worth `prior_labels` labels against the annotator's `labels`.
std::vector<double> shrunk_confusion(const std::vector<double>& estimated, std::size_t classes,
                                     double labels, double prior_accuracy, double prior_labels);

}  // namespace winnow::curation::annotate
