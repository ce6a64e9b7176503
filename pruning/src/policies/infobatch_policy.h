// "infobatch": InfoBatch (Qin et al., ICLR 2024). Samples whose score is
// strictly below the mean of all scores are candidates; each candidate is
// pruned with probability r (the paper's Eq. 3) and, if kept, weighted
// 1/(1-r), so E[weight * kept] = 1 exactly. Every other sample is kept with
// weight 1. (The reference code instead keeps exactly floor((1-r)|W|)
// candidates, which under-weights small candidate sets.)
#pragma once

#include "winnow/pruning/policy.h"

namespace winnow {

class InfoBatchPolicy final : public Policy {
 public:
  InfoBatchPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;

  double prune_ratio() const { return r_; }

 private:
  double r_ = 0.5;
};

// Reads and checks the prune ratio r in [0, 1) from a spec.
double read_prune_ratio(ParamReader& reader, const PolicySpec& spec, double fallback);

// InfoBatch's candidate rule, shared by the policies that compare with it: a
// sample is a candidate when its score is strictly below the mean of all
// scores (rounded to float, as scores are).
float candidate_threshold(const ScoreTable& scores);
std::uint64_t count_candidates(const ScoreTable& scores);

}  // namespace winnow
