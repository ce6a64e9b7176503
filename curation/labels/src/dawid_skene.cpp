#include "winnow/curation/labels/dawid_skene.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "winnow/error.h"

namespace winnow::curation::labels {

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
    WINNOW_THROW_IF_NOT(
        labels.label[a] >= 0 && static_cast<std::size_t>(labels.label[a]) < labels.classes,
        "Dawid-Skene annotation {}: label {} is not in [0, {})", a, labels.label[a],
        labels.classes);
  }
  WINNOW_THROW_IF_NOT(options.max_iterations >= 1, "Dawid-Skene max_iterations={} must be >= 1",
                      options.max_iterations);
  WINNOW_THROW_IF_NOT(std::isfinite(options.tolerance) && options.tolerance >= 0.0,
                      "Dawid-Skene tolerance={} must be finite and >= 0", options.tolerance);
  // Without smoothing an unused cell has probability 0 and its log is -inf.
  WINNOW_THROW_IF_NOT(std::isfinite(options.smoothing) && options.smoothing > 0.0,
                      "Dawid-Skene smoothing={} must be finite and > 0", options.smoothing);
  WINNOW_THROW_IF_NOT(std::isfinite(options.diagonal_prior) && options.diagonal_prior >= 0.0,
                      "Dawid-Skene diagonal_prior={} must be finite and >= 0",
                      options.diagonal_prior);
}

// Each item's majority-vote shares, EM's starting posteriors (uniform for an
// item without answers): [i * K + c].
std::vector<double> majority_shares(const CrowdLabels& labels) {
  const std::size_t K = labels.classes;
  std::vector<double> shares(labels.items() * K, 0.0);
  for (std::size_t i = 0; i < labels.items(); ++i) {
    double* row = shares.data() + i * K;
    const std::size_t first = labels.offsets[i];
    const std::size_t last = labels.offsets[i + 1];
    if (first == last) {
      std::fill(row, row + K, 1.0 / static_cast<double>(K));
      continue;
    }
    for (std::size_t a = first; a < last; ++a) row[labels.label[a]] += 1.0;
    for (std::size_t c = 0; c < K; ++c) row[c] /= static_cast<double>(last - first);
  }
  return shares;
}

// exp(log_row - max), normalised, into `out`.
void normalise_into(std::vector<double>& log_row, double* out) {
  const double top = *std::max_element(log_row.begin(), log_row.end());
  double total = 0.0;
  for (double& v : log_row) total += (v = std::exp(v - top));
  for (std::size_t c = 0; c < log_row.size(); ++c) out[c] = log_row[c] / total;
}

// Every item's most likely class and its posterior (first class on ties).
void write_argmax(const std::vector<double>& posterior, std::size_t items, std::size_t classes,
                  DawidSkeneResult& result) {
  result.consensus.resize(items);
  result.consensus_posterior.resize(items);
  for (std::size_t i = 0; i < items; ++i) {
    const double* p = posterior.data() + i * classes;
    const auto best = static_cast<std::size_t>(std::max_element(p, p + classes) - p);
    result.consensus[i] = static_cast<int>(best);
    result.consensus_posterior[i] = p[best];
  }
}

// What both models keep: the input, the options, every item's posterior and
// the class prior, and how a round's change is reported.
class EmState {
 public:
  void write_consensus(DawidSkeneResult& result) const { write_argmax(posterior_, N_, K_, result); }

 protected:
  // Starts from each item's majority-vote shares.
  EmState(const CrowdLabels& labels, double smoothing, double diagonal_prior)
      : labels_(labels),
        K_(labels.classes),
        W_(labels.annotators),
        N_(labels.items()),
        s_(smoothing),
        d_(diagonal_prior),
        posterior_(majority_shares(labels)),
        prior_(K_, 0.0),
        log_prior_(K_),
        class_mass_(K_),
        row_(K_) {}

  // p[c] from class_mass_ (the summed posteriors); the largest change of one.
  double update_prior() {
    double change = 0.0;
    for (std::size_t c = 0; c < K_; ++c) {
      const double updated =
          (class_mass_[c] + s_) / (static_cast<double>(N_) + static_cast<double>(K_) * s_);
      change = std::max(change, std::abs(updated - prior_[c]));
      prior_[c] = updated;
      log_prior_[c] = std::log(updated);
    }
    return change;
  }

  // An M-step's change, infinity the first time (nothing to compare with).
  double round_change(double change) {
    if (!first_m_step_) return change;
    first_m_step_ = false;
    return std::numeric_limits<double>::infinity();
  }

  const CrowdLabels& labels_;
  // K classes, W annotators, N items, s smoothing: the header's notation.
  const std::size_t K_;
  const std::size_t W_;
  const std::size_t N_;
  const double s_;
  const double d_;                 // diagonal_prior
  std::vector<double> posterior_;  // [i * K + c] = P(item i is class c | its answers)
  std::vector<double> prior_;
  std::vector<double> log_prior_;
  std::vector<double> class_mass_;  // per class: summed posteriors
  std::vector<double> row_;         // the E-step's scratch row

 private:
  bool first_m_step_ = true;
};

// The EM state over flat arrays. Sufficient statistics and log parameters are
// laid out so the E-step adds one contiguous K-row per annotation: cell
// (w, k, c) = answer k, true class c.
class DawidSkeneEm : public EmState {
 public:
  DawidSkeneEm(const CrowdLabels& labels, double smoothing, double diagonal_prior)
      : EmState(labels, smoothing, diagonal_prior),
        counts_(W_ * K_ * K_),
        log_error_(W_ * K_ * K_),
        error_(W_ * K_ * K_, 0.0),
        column_total_(K_) {}

  // Re-estimates the prior and confusion matrices from the posteriors and
  // returns how far they moved since the previous M-step (the convergence
  // measure: they are what the report publishes); infinity the first time.
  double m_step() {
    accumulate_counts();
    double change = update_prior();
    for (std::size_t w = 0; w < W_; ++w) {
      change = std::max(change, update_confusion(w));
    }
    return round_change(change);
  }

  // Recomputes every item's posterior from the parameters, in log space
  // shifted by the row maximum.
  void e_step() {
    for (std::size_t i = 0; i < N_; ++i) {
      std::copy(log_prior_.begin(), log_prior_.end(), row_.begin());
      for (std::size_t a = labels_.offsets[i]; a < labels_.offsets[i + 1]; ++a) {
        const double* cell = log_error_.data() + cell_row(a);
        for (std::size_t c = 0; c < K_; ++c) row_[c] += cell[c];
      }
      normalise_into(row_, posterior_.data() + i * K_);
    }
  }

  // The parameters of the last M-step (those the final posteriors were
  // computed from), as probabilities indexed [w][true c][given k].
  void write_parameters(DawidSkeneResult& result) const {
    result.priors = prior_;
    result.confusion.assign(W_ * K_ * K_, 0.0);
    result.expected_accuracy.assign(W_, 0.0);
    for (std::size_t w = 0; w < W_; ++w) {
      for (std::size_t c = 0; c < K_; ++c) {
        for (std::size_t k = 0; k < K_; ++k) {
          result.confusion[(w * K_ + c) * K_ + k] = error_[(w * K_ + k) * K_ + c];
        }
        result.expected_accuracy[w] += prior_[c] * result.confusion[(w * K_ + c) * K_ + c];
      }
    }
  }

  void write_consensus(DawidSkeneResult& result) const { write_argmax(posterior_, N_, K_, result); }

 private:
  // Offset of the K-row of cells (annotator of a, answer of a, every c).
  std::size_t cell_row(std::size_t a) const {
    return (static_cast<std::size_t>(labels_.annotator[a]) * K_ +
            static_cast<std::size_t>(labels_.label[a])) *
           K_;
  }

  void accumulate_counts() {
    std::fill(counts_.begin(), counts_.end(), 0.0);
    std::fill(class_mass_.begin(), class_mass_.end(), 0.0);
    for (std::size_t i = 0; i < N_; ++i) {
      const double* p = posterior_.data() + i * K_;
      for (std::size_t c = 0; c < K_; ++c) class_mass_[c] += p[c];
      for (std::size_t a = labels_.offsets[i]; a < labels_.offsets[i + 1]; ++a) {
        double* cell = counts_.data() + cell_row(a);
        for (std::size_t c = 0; c < K_; ++c) cell[c] += p[c];
      }
    }
  }

  // Annotator w's confusion cells; returns the largest change of one.
  double update_confusion(std::size_t w) {
    const double* block = counts_.data() + w * K_ * K_;
    std::fill(column_total_.begin(), column_total_.end(), static_cast<double>(K_) * s_ + d_);
    for (std::size_t k = 0; k < K_; ++k) {
      for (std::size_t c = 0; c < K_; ++c) column_total_[c] += block[k * K_ + c];
    }
    double change = 0.0;
    for (std::size_t cell = w * K_ * K_; cell < (w + 1) * K_ * K_; ++cell) {
      const std::size_t c = cell % K_;
      const std::size_t answer = (cell / K_) % K_;
      const double updated = (counts_[cell] + s_ + (answer == c ? d_ : 0.0)) / column_total_[c];
      change = std::max(change, std::abs(updated - error_[cell]));
      error_[cell] = updated;
      log_error_[cell] = std::log(updated);
    }
    return change;
  }

  std::vector<double> counts_;
  std::vector<double> log_error_;
  std::vector<double> error_;         // probabilities, same layout
  std::vector<double> column_total_;  // per true class: an annotator's answers
};

// The one-coin model: annotator w answers the true class with probability
// a_w and each other class with (1 - a_w) / (K - 1). Its E-step starts every
// class from the sum of the item's "wrong" logs and moves only the answered
// classes, so a round costs the annotations plus N x K, with no K x K state.
class OneCoinEm : public EmState {
 public:
  OneCoinEm(const CrowdLabels& labels, double smoothing, double diagonal_prior)
      : EmState(labels, smoothing, diagonal_prior),
        accuracy_(W_, 0.0),
        log_right_(W_),
        log_wrong_(W_),
        right_(W_),
        answers_(W_) {}

  double m_step() {
    std::fill(right_.begin(), right_.end(), 0.0);
    std::fill(answers_.begin(), answers_.end(), 0.0);
    std::fill(class_mass_.begin(), class_mass_.end(), 0.0);
    for (std::size_t i = 0; i < N_; ++i) {
      const double* p = posterior_.data() + i * K_;
      for (std::size_t c = 0; c < K_; ++c) class_mass_[c] += p[c];
      for (std::size_t a = labels_.offsets[i]; a < labels_.offsets[i + 1]; ++a) {
        const auto w = static_cast<std::size_t>(labels_.annotator[a]);
        right_[w] += p[labels_.label[a]];
        answers_[w] += 1.0;
      }
    }
    double change = update_prior();
    for (std::size_t w = 0; w < W_; ++w) {
      const double updated = (right_[w] + s_ + d_) / (answers_[w] + 2.0 * s_ + d_);
      change = std::max(change, std::abs(updated - accuracy_[w]));
      accuracy_[w] = updated;
      log_right_[w] = std::log(updated);
      log_wrong_[w] = std::log((1.0 - updated) / static_cast<double>(K_ - 1));
    }
    return round_change(change);
  }

  void e_step() {
    for (std::size_t i = 0; i < N_; ++i) {
      double wrong = 0.0;
      for (std::size_t a = labels_.offsets[i]; a < labels_.offsets[i + 1]; ++a) {
        wrong += log_wrong_[static_cast<std::size_t>(labels_.annotator[a])];
      }
      for (std::size_t c = 0; c < K_; ++c) row_[c] = log_prior_[c] + wrong;
      for (std::size_t a = labels_.offsets[i]; a < labels_.offsets[i + 1]; ++a) {
        const auto w = static_cast<std::size_t>(labels_.annotator[a]);
        row_[static_cast<std::size_t>(labels_.label[a])] += log_right_[w] - log_wrong_[w];
      }
      normalise_into(row_, posterior_.data() + i * K_);
    }
  }

  void write_parameters(DawidSkeneResult& result) const {
    result.priors = prior_;
    result.one_coin = true;
    result.accuracy = accuracy_;
    result.expected_accuracy = accuracy_;  // the same whatever the class
  }

 private:
  std::vector<double> accuracy_;
  std::vector<double> log_right_;
  std::vector<double> log_wrong_;
  std::vector<double> right_;    // per annotator: summed posteriors of his answers
  std::vector<double> answers_;  // per annotator: his answers
};

// Runs EM rounds (M-step, then E-step) until the parameters settle.
template <typename Em>
DawidSkeneResult run_em(Em& em, const CrowdLabels& labels, const DawidSkeneOptions& options) {
  DawidSkeneResult result;
  result.classes = labels.classes;
  result.annotators = labels.annotators;
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    const double change = em.m_step();
    em.e_step();
    result.iterations = iteration;
    if (std::isfinite(change)) result.final_change = change;
    if (change <= options.tolerance) {
      result.converged = true;
      break;
    }
  }
  em.write_parameters(result);
  em.write_consensus(result);
  return result;
}

}  // namespace

double class_log_prior(const DawidSkeneResult& result, std::size_t c) {
  return std::log(std::max(result.priors[c], 1e-300));
}

double answer_log_likelihood(const DawidSkeneResult& result, const CrowdLabels& labels,
                             std::size_t answer, std::size_t c) {
  return std::log(std::max(result.confusion_at(static_cast<std::size_t>(labels.annotator[answer]),
                                               c, static_cast<std::size_t>(labels.label[answer])),
                           1e-300));
}

void item_log_posterior(const DawidSkeneResult& result, const CrowdLabels& labels, std::size_t item,
                        std::vector<double>& out) {
  out.resize(result.classes);
  for (std::size_t c = 0; c < result.classes; ++c) {
    out[c] = class_log_prior(result, c);
    for (std::size_t a = labels.offsets[item]; a < labels.offsets[item + 1]; ++a) {
      out[c] += answer_log_likelihood(result, labels, a, c);
    }
  }
}

std::vector<double> item_posterior(const DawidSkeneResult& result, const CrowdLabels& labels,
                                   std::size_t item) {
  std::vector<double> p;
  item_log_posterior(result, labels, item, p);
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0.0;
  for (double& v : p) sum += (v = std::exp(v - top));
  for (double& v : p) v /= sum;
  return p;
}

std::optional<std::int64_t> majority_label(const std::map<std::int64_t, std::int64_t>& votes,
                                           std::optional<std::int64_t> on_tie) {
  std::optional<std::int64_t> best;
  std::int64_t most = 0;
  for (const auto& [label, count] : votes) {
    if (count > most) most = count, best = label;
  }
  if (best && on_tie) {
    const auto tied = votes.find(*on_tie);
    if (tied != votes.end() && tied->second == most) best = on_tie;
  }
  return best;
}

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
  const std::size_t k = labels.classes;
  const bool one_coin = k > 1 && labels.annotators > options.max_confusion_cells / (k * k);
  if (one_coin) {
    OneCoinEm em(labels, options.smoothing, options.diagonal_prior);
    return run_em(em, labels, options);
  }
  DawidSkeneEm em(labels, options.smoothing, options.diagonal_prior);
  return run_em(em, labels, options);
}

}  // namespace winnow::curation::labels
