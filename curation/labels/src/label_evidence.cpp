#include "winnow/curation/labels/label_evidence.h"

#include <cmath>

#include "winnow/error.h"

namespace winnow::curation::labels {

LabelEvidence::LabelEvidence(LabelEvidenceOptions options) : options_(options) {
  WINNOW_THROW_IF_NOT(
      std::isfinite(options_.min_lift) && options_.min_lift >= 0.0 && options_.min_lift <= 1.0,
      "label evidence: min_lift={} must be in [0, 1]", options_.min_lift);
  WINNOW_THROW_IF_NOT(options_.min_samples >= 1, "label evidence: min_samples={} must be >= 1",
                      options_.min_samples);
}

void LabelEvidence::add(std::int64_t label, std::int64_t samples, double quality_sum) {
  WINNOW_THROW_IF_NOT(samples >= 0 && std::isfinite(quality_sum) && quality_sum >= 0.0 &&
                          quality_sum <= static_cast<double>(samples) * (1.0 + 1e-9),
                      "label evidence: {} samples of label {} cannot sum to quality {}", samples,
                      label, quality_sum);
  if (samples == 0) return;
  Sums& sums = by_label_[label];
  const auto before = static_cast<double>(sums.samples);
  const double after = before + static_cast<double>(samples);
  squared_counts_ += after * after - before * before;
  sums.samples += samples;
  sums.quality += quality_sum;
  samples_ += samples;
  quality_ += quality_sum;
}

// Kappa: (observed agreement - chance agreement) / (1 - chance agreement),
// with chance agreement sum_c (n_c / N)^2.
double LabelEvidence::lift() const {
  if (samples_ == 0) return 0.0;
  const auto n = static_cast<double>(samples_);
  const double chance = squared_counts_ / (n * n);
  if (chance >= 1.0) return 0.0;  // one class: nothing to tell apart
  return (quality_ / n - chance) / (1.0 - chance);
}

ClassEvidence LabelEvidence::of(std::int64_t label) const {
  ClassEvidence c;
  c.label = label;
  const auto it = by_label_.find(label);
  if (it == by_label_.end()) return c;
  c.samples = it->second.samples;
  c.agreement = it->second.quality / static_cast<double>(c.samples);
  c.chance = static_cast<double>(c.samples) / static_cast<double>(samples_);
  c.lift = c.chance < 1.0 ? (c.agreement - c.chance) / (1.0 - c.chance) : 0.0;
  c.judged = c.samples >= options_.min_samples && c.lift >= options_.min_lift &&
             lift() >= options_.min_lift;
  return c;
}

std::vector<ClassEvidence> LabelEvidence::classes() const {
  std::vector<ClassEvidence> out;
  for (const auto& entry : by_label_) out.push_back(of(entry.first));
  return out;
}

std::vector<ClassEvidence> LabelEvidence::abstained() const {
  std::vector<ClassEvidence> out;
  for (const auto& entry : by_label_) {
    ClassEvidence c = of(entry.first);
    if (!c.judged) out.push_back(c);
  }
  return out;
}

}  // namespace winnow::curation::labels
