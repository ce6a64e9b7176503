// Internal helpers shared by the built-in policies: collecting a plan,
// drawing exact-size random subsets, and picking the top-k scores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "winnow/pruning/epoch_plan.h"
#include "winnow/pruning/random.h"

namespace winnow::detail {

// Largest sample id a plan can hold: the top byte carries the weight code
// while the plan is shuffled.
constexpr std::uint64_t kMaxSamples = std::uint64_t{1} << 56;

// Collects (id, weight code) pairs, then shuffles them into an EpochPlan.
class PlanBuilder {
 public:
  explicit PlanBuilder(std::uint64_t expected_size) { packed_.reserve(expected_size); }

  void add(std::uint64_t id, std::uint8_t code) {
    packed_.push_back(id | (static_cast<std::uint64_t>(code) << 56));
  }
  std::uint64_t size() const { return packed_.size(); }

  // Writes the collected entries into plan.ids and plan.weight_codes in a
  // uniformly random order (Fisher-Yates); codes are dropped when all are 0.
  void finish(Rng& rng, EpochPlan& plan, bool shuffle = true);

 private:
  std::vector<std::uint64_t> packed_;
};

// Draws exactly `wanted` of `population` items, each subset equally likely,
// in one pass over the items (Knuth's selection sampling, Algorithm S).
class ExactSubset {
 public:
  ExactSubset(std::uint64_t wanted, std::uint64_t population)
      : wanted_(wanted), remaining_(population) {}
  bool take(Rng& rng) {
    const bool chosen = rng.below(remaining_) < wanted_;
    --remaining_;
    wanted_ -= chosen ? 1 : 0;
    return chosen;
  }

 private:
  std::uint64_t wanted_;
  std::uint64_t remaining_;
};

// Picks the k largest values of an array in index order: every value above
// the threshold, and the first `ties` values equal to it.
class TopK {
 public:
  TopK(const float* values, std::uint64_t n, std::uint64_t k);
  bool take(float value) {
    if (value > threshold_) return true;
    if (value == threshold_ && ties_ > 0) {
      --ties_;
      return true;
    }
    return false;
  }

 private:
  float threshold_;
  std::uint64_t ties_ = 0;
};

// Number of items to keep out of `count` at keep ratio `keep`, rounded
// stochastically: floor(count*keep) plus one with probability equal to the
// fractional part. Its expectation is exactly count*keep, so weighting kept
// items by 1/keep is exactly unbiased (the InfoBatch reference floors, which
// under-weights small candidate sets: one candidate at r = 0.5 is never kept).
inline std::uint64_t kept_count(std::uint64_t count, double keep, Rng& rng) {
  const double exact = static_cast<double>(count) * keep;
  auto kept = static_cast<std::uint64_t>(exact);
  if (rng.uniform() < exact - static_cast<double>(kept)) ++kept;
  return kept < count ? kept : count;
}

// floor(count * fraction), for hard (unweighted) pruning fractions.
inline std::uint64_t floor_count(std::uint64_t count, double fraction) {
  return static_cast<std::uint64_t>(static_cast<double>(count) * fraction);
}

}  // namespace winnow::detail
