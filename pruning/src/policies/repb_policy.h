// "repb": RePB-style pruning ("Inconsistency Biases in Dynamic Data Pruning",
// ICLR 2026), after its two remedies:
//   - Local windows against score context drift: losses are compared only
//     with losses recorded under nearly the same model, those of the same
//     window of `window` consecutive observations (the order update() sees
//     them). A sample is a candidate when its score is below the mean score
//     of its window; each candidate is pruned with probability r.
//   - Cumulative temporal reweighting against temporal gradient bias: a kept
//     sample is weighted by the inverse of its historical selection
//     frequency, E / C, where E counts the policy's plans so far and C those
//     that kept the sample (this one included). Every sample's weighted count
//     over the run then tracks the number of epochs: sum_t w_t * kept_t ~ E.
// Samples never observed share window 0, so a fresh policy compares them all,
// as InfoBatch does. Weights are exact while E <= 254; beyond, C is grouped
// into 255 ranges (the weight palette's limit) weighted by E / (range mean).
// The paper's window and ratio are not in its public summary; winnow's
// defaults (window=4096 observations, r=0.5) and what they prune are
// documented in docs/pruning.md.
// State, saved with the run: per sample its window and selection count (8
// bytes), plus E and the number of observations.
#pragma once

#include <vector>

#include "winnow/pruning/policy.h"

namespace winnow {

class RepbPolicy final : public Policy {
 public:
  RepbPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  void observe(const ScoreTable& before, const std::uint64_t* ids, const float* losses,
               std::size_t count) override;
  bool observes() const override { return true; }
  std::vector<float> state() const override;
  void set_state(const std::vector<float>& state) override;
  std::uint64_t state_bytes() const override {
    return (window_of_.size() + selected_.size()) * sizeof(float);
  }

 private:
  double r_ = 0.5;
  std::uint64_t window_ = 4096;
  std::vector<float> window_of_;  // window index of each sample's latest loss
  std::vector<float> selected_;   // plans that kept the sample (C)
  std::uint64_t plans_made_ = 0;  // E
  std::uint64_t observed_ = 0;    // observations so far, all epochs
};

}  // namespace winnow
