#include "expected_gain.h"

#include <algorithm>

namespace winnow::curation::annotate {

double expected_accuracy_gain(const std::vector<double>& p, const std::vector<double>& confusion) {
  const std::size_t k = p.size();
  const double now = *std::max_element(p.begin(), p.end());
  double after = 0.0;
  for (std::size_t l = 0; l < k; ++l) {
    double best = 0.0;
    for (std::size_t c = 0; c < k; ++c) best = std::max(best, p[c] * confusion[c * k + l]);
    after += best;
  }
  return std::max(0.0, after - now);
}

std::vector<double> shrunk_confusion(const std::vector<double>& estimated, std::size_t classes,
                                     double labels, double prior_accuracy, double prior_labels) {
  const double off = classes > 1 ? (1.0 - prior_accuracy) / static_cast<double>(classes - 1) : 0.0;
  std::vector<double> out(classes * classes);
  const double w = labels + prior_labels;
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::size_t l = 0; l < classes; ++l) {
      const double prior = c == l ? prior_accuracy : off;
      const double seen = estimated.empty() ? prior : estimated[c * classes + l];
      out[c * classes + l] = w > 0 ? (labels * seen + prior_labels * prior) / w : prior;
    }
  }
  return out;
}

}  // namespace winnow::curation::annotate
