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

// Collects (id, weight code) pairs and shuffles them into an EpochPlan.
//
// The shuffle is Rao-Sandelius: each entry goes to one of B random buckets as
// it is added, then every bucket is Fisher-Yates shuffled and the buckets are
// concatenated. That is a uniform random permutation, like one big
// Fisher-Yates, but each bucket fits in cache: at N = 10M a single shuffle
// spends most of its time on cache misses.
class PlanBuilder {
 public:
  // `rng` draws the buckets; shuffle = false keeps the order of add().
  // `num_samples` sizes the by-id weight codes (see EpochPlan::codes_by_id).
  PlanBuilder(std::uint64_t expected_size, std::uint64_t num_samples, Rng& rng,
              bool shuffle = true);
  ~PlanBuilder();
  PlanBuilder(const PlanBuilder&) = delete;
  PlanBuilder& operator=(const PlanBuilder&) = delete;

  void add(std::uint64_t id, std::uint8_t code) {
    if (code != 0) {
      any_code_ = true;
      note_code(id, code);
    }
    const std::uint64_t entry = id | (static_cast<std::uint64_t>(code) << 56);
    std::size_t bucket = 0;
    if (bucket_mask_ != 0) {
      // One 64-bit draw gives the buckets of eight entries.
      if (bits_left_ == 0) {
        bits_ = rng_.next();
        bits_left_ = 8;
      }
      bucket = static_cast<std::size_t>(bits_ & bucket_mask_);
      bits_ >>= 8;
      --bits_left_;
    }
    if (next_[bucket] == end_[bucket]) grow(bucket);
    *next_[bucket]++ = entry;
  }

  // Writes the entries into plan.ids, plan.weight_codes (dropped when every
  // code is 0) and plan.codes_by_id, shuffled unless shuffle = false.
  void finish(EpochPlan& plan);

 private:
  // Records a non-zero code by id while ids arrive in increasing order (they
  // do for every built-in policy); otherwise gives up on codes_by_id.
  void note_code(std::uint64_t id, std::uint8_t code);
  // Doubles a full bucket's storage (rare: buckets are sized with slack).
  void grow(std::size_t bucket);

  Rng& rng_;
  bool shuffle_;
  std::uint64_t num_samples_;
  // Storage borrowed from a per-thread pool; add() writes through next_
  // (the hot path touches only these two small arrays and the bucket).
  std::vector<std::vector<std::uint64_t>> buckets_;
  std::uint64_t* next_[256] = {};
  std::uint64_t* end_[256] = {};
  std::uint64_t bucket_mask_ = 0;  // B - 1, B a power of two <= 256
  std::uint64_t bits_ = 0;
  int bits_left_ = 0;
  bool any_code_ = false;
  std::vector<std::uint8_t> codes_by_id_;
  bool codes_in_order_ = true;
  std::uint64_t last_coded_id_ = 0;
};

// Plans every sample with weight 1: warm-up, annealing and the "full" policy.
void plan_all(std::uint64_t num_samples, Rng& rng, EpochPlan& plan, bool shuffle = true);

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
