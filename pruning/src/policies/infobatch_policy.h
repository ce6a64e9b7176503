// "infobatch": InfoBatch (Qin et al., ICLR 2024). Samples whose score is
// strictly below the mean of all scores are candidates; each candidate is
// pruned with probability r (the paper's Eq. 3) and, if kept, weighted
// 1/(1-r), so E[weight * kept] = 1 exactly. Every other sample is kept with
// weight 1. (The reference code instead keeps exactly floor((1-r)|W|)
// candidates, which under-weights small candidate sets.)
//
// Two ways to set how much it prunes: a fixed ratio "r=F" (the paper's
// setting, r = 0.5), or a saving budget "save=F", the default (save = 0.4):
// before each pruned epoch DynamicPruner aims the plan at a share of all
// samples, and r becomes share * N / |candidates|. When that r would exceed
// kMaxRatio, the candidates grow from the lowest scores up past the mean until
// it does not, so the budget is met without weights above 1/(1 - kMaxRatio).
#pragma once

#include "winnow/pruning/policy.h"

namespace winnow {

class InfoBatchPolicy final : public Policy {
 public:
  InfoBatchPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;

  double target_saving() const override { return save_; }
  void aim(double share) override { share_ = share; }

  double prune_ratio() const { return r_; }

  static constexpr double kDefaultSaving = 0.4;
  static constexpr double kMaxRatio = 0.8;

 private:
  // Prunes each sample scored strictly below `threshold` with probability r.
  static void plan_below(const ScoreTable& scores, float threshold, double r, Rng& rng,
                         EpochPlan& plan);

  bool budget_ = true;  // "save=F" (or no parameter): a saving budget; else r
  double r_ = 0.5;      // the fixed ratio
  double save_ = 0.0;   // the saving budget
  double share_ = 0.0;  // the share of samples the next plan skips (budget mode)
};

// Reads and checks a saving budget "save" in [0, kMaxSavingBudget] from a spec.
constexpr double kMaxSavingBudget = 0.8;
double read_saving_budget(ParamReader& reader, const PolicySpec& spec, double fallback);

// Reads and checks the prune ratio r in [0, 1) from a spec.
double read_prune_ratio(ParamReader& reader, const PolicySpec& spec, double fallback);

// InfoBatch's candidate rule, shared by the policies that compare with it: a
// sample is a candidate when its score is strictly below the mean of all
// scores (rounded to float, as scores are).
float candidate_threshold(const ScoreTable& scores);
std::uint64_t count_candidates(const ScoreTable& scores);
// Samples scored strictly below `threshold`.
std::uint64_t count_below(const ScoreTable& scores, float threshold);

}  // namespace winnow
