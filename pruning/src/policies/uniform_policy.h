// "uniform": dynamic random pruning (RS2-style): each epoch a fresh uniform
// random subset of K samples, weighted so every sample's expected weighted
// count is exactly 1.
//   keep=F   fixed keep fraction F in (0, 1]: K = F*N rounded stochastically,
//            weight 1/F;
//   save=F   a saving budget, as infobatch's: K = (1 - share) * N, the share
//            set by DynamicPruner before each plan; weight N/K;
//   default  K matches what infobatch(r) would keep on the same scores, so the
//            two compare at equal compute; weight N/K.
#pragma once

#include "winnow/pruning/policy.h"

namespace winnow {

class UniformPolicy final : public Policy {
 public:
  UniformPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  bool needs_scores() const override { return keep_ <= 0.0 && !budget_; }
  double target_saving() const override { return budget_ ? save_ : 0.0; }
  void aim(double share) override { share_ = share; }

 private:
  double r_ = 0.5;
  double keep_ = 0.0;  // 0: match infobatch(r)
  bool budget_ = false;
  double save_ = 0.0;
  double share_ = 0.0;
};

}  // namespace winnow
