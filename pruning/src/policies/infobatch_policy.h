// "infobatch": InfoBatch (Qin et al., ICLR 2024). Samples whose score is
// strictly below the mean of all scores are candidates; (1-r)|W| of the |W|
// candidates (rounded stochastically, see kept_count) are kept, drawn without
// replacement, with weight 1/(1-r); every other sample is kept with weight 1.
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

// Reads and checks the prune ratio r in [0, 1) from a spec ("r" or "prune_ratio").
double read_prune_ratio(ParamReader& reader, const PolicySpec& spec, double fallback);

}  // namespace winnow
