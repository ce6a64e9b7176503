#pragma once

#include "winnow/pruning/policy.h"

namespace winnow {

class FullPolicy final : public Policy {
 public:
  FullPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  bool prunes() const override { return false; }
  bool needs_scores() const override { return false; }

 private:
  bool shuffle_ = true;
};

}  // namespace winnow
