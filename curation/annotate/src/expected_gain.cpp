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

double expected_purity_gain(const std::vector<double>& p, const std::vector<double>& confusion) {
  const std::size_t k = p.size();
  double before = 0.0;
  for (double v : p) before += v * v;
  double after = 0.0;
  for (std::size_t l = 0; l < k; ++l) {
    double answer = 0.0, squares = 0.0;  // P(l), and sum_c (p[c] pi[c][l])^2
    for (std::size_t c = 0; c < k; ++c) {
      const double joint = p[c] * confusion[c * k + l];
      answer += joint;
      squares += joint * joint;
    }
    if (answer > 0) after += squares / answer;
  }
  return std::max(0.0, after - before);
}

double task_value(const std::vector<double>& p, const std::vector<double>& confusion) {
  return expected_accuracy_gain(p, confusion) + kPurityWeight * expected_purity_gain(p, confusion);
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
