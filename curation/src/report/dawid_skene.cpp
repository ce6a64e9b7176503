#include "winnow/curation/report/dawid_skene.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "winnow/error.h"

namespace winnow::curation {

namespace {

void check_input(const CrowdLabels& labels, const DawidSkeneOptions& options) {
  WINNOW_THROW_IF_NOT(labels.classes >= 1, "Dawid-Skene needs at least one class, got 0");
  WINNOW_THROW_IF_NOT(labels.annotator.size() == labels.label.size(),
                      "Dawid-Skene input has {} annotators for {} labels; they must pair up",
                      labels.annotator.size(), labels.label.size());
  WINNOW_THROW_IF_NOT(!labels.offsets.empty() && labels.offsets.front() == 0 &&
                          labels.offsets.back() == labels.label.size() &&
                          std::is_sorted(labels.offsets.begin(), labels.offsets.end()),
                      "Dawid-Skene input offsets must rise from 0 to the number of annotations "
                      "({})",
                      labels.label.size());
  for (std::size_t a = 0; a < labels.label.size(); ++a) {
    WINNOW_THROW_IF_NOT(labels.annotator[a] >= 0 &&
                            static_cast<std::size_t>(labels.annotator[a]) < labels.annotators,
                        "Dawid-Skene annotation {}: annotator {} is not in [0, {})", a,
                        labels.annotator[a], labels.annotators);
    WINNOW_THROW_IF_NOT(labels.label[a] >= 0 &&
                            static_cast<std::size_t>(labels.label[a]) < labels.classes,
                        "Dawid-Skene annotation {}: label {} is not in [0, {})", a,
                        labels.label[a], labels.classes);
  }
  WINNOW_THROW_IF_NOT(options.max_iterations >= 1, "Dawid-Skene max_iterations={} must be >= 1",
                      options.max_iterations);
  WINNOW_THROW_IF_NOT(std::isfinite(options.tolerance) && options.tolerance >= 0.0,
                      "Dawid-Skene tolerance={} must be finite and >= 0", options.tolerance);
  // Without smoothing an unused cell has probability 0 and its log is -inf.
  WINNOW_THROW_IF_NOT(std::isfinite(options.smoothing) && options.smoothing > 0.0,
                      "Dawid-Skene smoothing={} must be finite and > 0", options.smoothing);
}

}  // namespace

std::vector<int> majority_vote(const CrowdLabels& labels) {
  const std::size_t classes = labels.classes;
  std::vector<int> votes(classes);
  std::vector<int> winners(labels.items(), -1);
  for (std::size_t i = 0; i < labels.items(); ++i) {
    if (labels.offsets[i] == labels.offsets[i + 1]) continue;
    std::fill(votes.begin(), votes.end(), 0);
    for (std::size_t a = labels.offsets[i]; a < labels.offsets[i + 1]; ++a) {
      ++votes[static_cast<std::size_t>(labels.label[a])];
    }
    winners[i] = static_cast<int>(std::max_element(votes.begin(), votes.end()) - votes.begin());
  }
  return winners;
}

DawidSkeneResult dawid_skene(const CrowdLabels& labels, const DawidSkeneOptions& options) {
  check_input(labels, options);
  const std::size_t K = labels.classes;
  const std::size_t W = labels.annotators;
  const std::size_t N = labels.items();
  const double s = options.smoothing;

  // posterior[i * K + c] = P(item i is class c | its answers).
  std::vector<double> posterior(N * K, 0.0);
  for (std::size_t i = 0; i < N; ++i) {
    double* row = posterior.data() + i * K;
    const std::size_t first = labels.offsets[i];
    const std::size_t last = labels.offsets[i + 1];
    if (first == last) {
      std::fill(row, row + K, 1.0 / static_cast<double>(K));
      continue;
    }
    for (std::size_t a = first; a < last; ++a) row[labels.label[a]] += 1.0;
    for (std::size_t c = 0; c < K; ++c) row[c] /= static_cast<double>(last - first);
  }

  // Sufficient statistics and log parameters, laid out so the E-step adds one
  // contiguous K-row per annotation: cell (w, k, c) = answer k, true class c.
  std::vector<double> counts(W * K * K);
  std::vector<double> log_error(W * K * K);
  std::vector<double> prior(K);
  std::vector<double> log_prior(K);
  std::vector<double> column_total(K);  // per true class: an annotator's answers
  std::vector<double> class_mass(K);    // per class: summed posteriors
  std::vector<double> row(K);

  // The M-step also returns how far the parameters moved since the previous
  // one (the convergence measure: they are what the report publishes).
  std::vector<double> error(W * K * K, 0.0);  // probabilities, same layout
  bool first_m_step = true;
  auto m_step = [&]() -> double {
    std::fill(counts.begin(), counts.end(), 0.0);
    std::fill(class_mass.begin(), class_mass.end(), 0.0);
    for (std::size_t i = 0; i < N; ++i) {
      const double* p = posterior.data() + i * K;
      for (std::size_t c = 0; c < K; ++c) class_mass[c] += p[c];
      for (std::size_t a = labels.offsets[i]; a < labels.offsets[i + 1]; ++a) {
        double* cell = counts.data() +
                       (static_cast<std::size_t>(labels.annotator[a]) * K +
                        static_cast<std::size_t>(labels.label[a])) * K;
        for (std::size_t c = 0; c < K; ++c) cell[c] += p[c];
      }
    }
    double change = 0.0;
    for (std::size_t c = 0; c < K; ++c) {
      const double updated =
          (class_mass[c] + s) / (static_cast<double>(N) + static_cast<double>(K) * s);
      change = std::max(change, std::abs(updated - prior[c]));
      prior[c] = updated;
      log_prior[c] = std::log(updated);
    }
    for (std::size_t w = 0; w < W; ++w) {
      const double* block = counts.data() + w * K * K;
      std::fill(column_total.begin(), column_total.end(), static_cast<double>(K) * s);
      for (std::size_t k = 0; k < K; ++k) {
        for (std::size_t c = 0; c < K; ++c) column_total[c] += block[k * K + c];
      }
      for (std::size_t cell = w * K * K; cell < (w + 1) * K * K; ++cell) {
        const std::size_t c = cell % K;
        const double updated = (counts[cell] + s) / column_total[c];
        change = std::max(change, std::abs(updated - error[cell]));
        error[cell] = updated;
        log_error[cell] = std::log(updated);
      }
    }
    if (first_m_step) {
      first_m_step = false;
      return std::numeric_limits<double>::infinity();
    }
    return change;
  };

  DawidSkeneResult result;
  result.classes = K;
  result.annotators = W;
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    const double change = m_step();
    for (std::size_t i = 0; i < N; ++i) {
      std::copy(log_prior.begin(), log_prior.end(), row.begin());
      for (std::size_t a = labels.offsets[i]; a < labels.offsets[i + 1]; ++a) {
        const double* cell = log_error.data() +
                             (static_cast<std::size_t>(labels.annotator[a]) * K +
                              static_cast<std::size_t>(labels.label[a])) * K;
        for (std::size_t c = 0; c < K; ++c) row[c] += cell[c];
      }
      const double top = *std::max_element(row.begin(), row.end());
      double total = 0.0;
      for (std::size_t c = 0; c < K; ++c) {
        row[c] = std::exp(row[c] - top);
        total += row[c];
      }
      double* p = posterior.data() + i * K;
      for (std::size_t c = 0; c < K; ++c) p[c] = row[c] / total;
    }
    result.iterations = iteration;
    if (std::isfinite(change)) result.final_change = change;
    if (change <= options.tolerance) {
      result.converged = true;
      break;
    }
  }

  // Report the parameters of the last M-step (those the final posteriors
  // were computed from), as probabilities indexed [w][true c][given k].
  result.priors = prior;
  result.confusion.assign(W * K * K, 0.0);
  result.expected_accuracy.assign(W, 0.0);
  for (std::size_t w = 0; w < W; ++w) {
    for (std::size_t c = 0; c < K; ++c) {
      for (std::size_t k = 0; k < K; ++k) {
        result.confusion[(w * K + c) * K + k] = error[(w * K + k) * K + c];
      }
      result.expected_accuracy[w] += prior[c] * result.confusion[(w * K + c) * K + c];
    }
  }
  result.consensus.resize(N);
  result.consensus_posterior.resize(N);
  for (std::size_t i = 0; i < N; ++i) {
    const double* p = posterior.data() + i * K;
    const std::size_t best = static_cast<std::size_t>(std::max_element(p, p + K) - p);
    result.consensus[i] = static_cast<int>(best);
    result.consensus_posterior[i] = p[best];
  }
  return result;
}

}  // namespace winnow::curation
