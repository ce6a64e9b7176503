// "ucb": upper-confidence-bound selection (Raju, Daruwalla, Lipasti 2021,
// "Accelerating Deep Learning with Dynamic Data Pruning"). Each sample's score
// is an EMA of its loss (momentum m) and it also tracks an EMA of the squared
// deviation; the K = N - floor(prune*N) samples with the largest
// ema + c*sqrt(spread) are kept, weight 1 (no reweighting: biased by design).
// Defaults (winnow's, documented in docs/pruning.md): prune=0.3, c=1, m=0.8.
#pragma once

#include <vector>

#include "winnow/pruning/policy.h"

namespace winnow {

class UcbPolicy final : public Policy {
 public:
  UcbPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  float score_momentum() const override { return static_cast<float>(momentum_); }
  void observe(const ScoreTable& before, const std::uint64_t* ids, const float* losses,
               std::size_t count) override;
  bool observes() const override { return true; }
  std::vector<float> state() const override { return spread_; }
  void set_state(const std::vector<float>& state) override;
  std::uint64_t state_bytes() const override { return spread_.size() * sizeof(float); }

 private:
  double prune_ = 0.3;
  double c_ = 1.0;
  double momentum_ = 0.8;
  std::vector<float> spread_;  // EMA of (loss - ema)^2 per sample
};

// Reads and checks the hard-pruned fraction in [0, 1).
double read_prune_fraction(ParamReader& reader, const PolicySpec& spec, double fallback);

}  // namespace winnow
