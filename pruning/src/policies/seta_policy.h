// "seta": Scale Efficient Training (Zhou, Gao, Wang, CVPR 2025). Each pruning
// epoch:
//   1. a uniform random subset of floor((1 - prune) * N) samples is drawn;
//   2. the subset is split into `groups` clusters of similar score by 1-D
//      k-means, ordered from the lowest mean loss (easy) to the highest (hard);
//   3. a window of w = round(groups * window) consecutive clusters slides from
//      easy to hard, one step per pruning epoch, and wraps around: the policy's
//      t-th plan keeps clusters [s, s + w) with s = t mod (groups - w + 1); its
//      first plan keeps every cluster.
// Kept samples have weight 1: a curriculum, biased by design. Defaults are the
// reference's lossless CIFAR setting: prune=0.1, groups=5, window=0.9.
// State: the number of plans made (the window's position), saved with the run.
#pragma once

#include <vector>

#include "winnow/pruning/policy.h"

namespace winnow {

class SetaPolicy final : public Policy {
 public:
  SetaPolicy(const PolicySpec& spec, std::uint64_t num_samples);
  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  std::vector<float> state() const override { return {static_cast<float>(plans_made_)}; }
  void set_state(const std::vector<float>& state) override;

 private:
  double prune_ = 0.1;
  std::uint64_t groups_ = 5;
  double window_ = 0.9;
  std::uint64_t plans_made_ = 0;
};

// Splits `values` into k clusters by 1-D k-means and returns the k - 1
// boundaries between them, ascending: a value belongs to cluster c when
// exactly c boundaries are <= it; empty when all values are equal. Exact on a
// 1024-bin histogram of the values (no local minimum, no random start):
// dynamic programming over the bins, O(k * bins^2). The reference runs
// scikit-learn's KMeans instead.
std::vector<float> kmeans_boundaries(const std::vector<float>& values, std::uint64_t k);

}  // namespace winnow
