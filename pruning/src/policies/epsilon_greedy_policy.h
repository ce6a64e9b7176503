// "epsilon-greedy" (Raju et al. 2021): keep K = N - floor(prune*N) samples:
// the (1-eps)*K with the highest scores, plus eps*K drawn uniformly from the
// rest so low-loss samples still get re-scored. Weight 1 (no reweighting).
// Defaults (winnow's): prune=0.3, eps=0.1.
#pragma once

#include "winnow/pruning/policy.h"

namespace winnow {

class EpsilonGreedyPolicy final : public Policy {
 public:
  EpsilonGreedyPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;

 private:
  double prune_ = 0.3;
  double epsilon_ = 0.1;
};

}  // namespace winnow
