// "infobatch-quantile": the authors' bucketed variant (ImageNet, ADE20K forks).
// Scores are split at the given percentiles; bucket b keeps keep[b] of its
// samples (count rounded stochastically, drawn without replacement) with weight 1/keep[b];
// samples above the last percentile are always kept.
// Defaults: percentiles 20:85, keep 0.25:0.5.
#pragma once

#include <vector>

#include "winnow/pruning/policy.h"

namespace winnow {

class InfoBatchQuantilePolicy final : public Policy {
 public:
  InfoBatchQuantilePolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;

 private:
  std::vector<double> percentiles_{20.0, 85.0};
  std::vector<double> keep_{0.25, 0.5};
};

}  // namespace winnow
