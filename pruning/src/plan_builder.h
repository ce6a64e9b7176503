// Internal helpers shared by the built-in policies: collecting a plan,
// drawing exact-size random subsets, and picking the top-k scores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "winnow/pruning/epoch_plan.h"
#include "winnow/pruning/random.h"

namespace winnow::detail {

// Largest sample id a plan can hold: the top byte carries the weight code
// while the plan is shuffled.
constexpr std::uint64_t kMaxSamples = std::uint64_t{1} << 56;

// Building a plan: one pass of the policy over the samples stages the kept
// ones, then finish_plan() shuffles them into plan.ids.
//
//   const std::uint64_t kept = stage_plan(plan, max_code, [&](auto staging) {
//     std::uint64_t kept = 0;
//     for (id...) if (keep) { staging.codes[id] = code; staging.packed[kept++] = staging.pack(id,
//     code); } return kept;
//   });
//   plan.palette = {...};
//   finish_plan(plan, rng, kept);                 // shuffle into plan.ids
//
// `codes` (plan.codes_by_id) gives every sample's weight code, an index into
// plan.palette (0 for samples not kept); `packed` collects the kept samples,
// each id with its code in the top bits. Entries are 32 bits wide when the ids
// and codes up to `max_code` fit (N <= 2^31 for one code bit), 64 bits
// otherwise: narrow entries halve the memory traffic of the shuffle, the
// largest cost of a plan. The pass is a generic lambda, compiled for both
// widths. It writes through the staging's plain pointers: members reached
// through `this` would be reloaded after every byte store, since a byte store
// may alias anything.
//
// finish_plan() shuffles the kept samples with a Rao-Sandelius shuffle: each
// goes to one of B random buckets, each bucket is Fisher-Yates shuffled in
// cache (by a generator of its own, so large plans shuffle buckets on two
// threads and get the same plan), and the buckets are concatenated. That is a uniform random
// permutation, like one big Fisher-Yates, without a cache miss per element
// (at N = 10M a plain shuffle spends most of its time on those). The random
// draws do not depend on the entry width, so both widths give the same plan.
template <typename Entry>
struct PlanStaging {
  std::uint8_t* codes;  // plan.codes_by_id: N entries, zeroed
  Entry* packed;        // per-thread scratch with room for N + 1 entries
                        // (one spare for branch-free writers)
  unsigned shift;       // bit position of the weight code in an entry

  Entry pack(std::uint64_t id, std::uint8_t code) const {
    return static_cast<Entry>(id | (static_cast<std::uint64_t>(code) << shift));
  }
};

// The entry width and code position stage_plan() chose for a plan of
// `num_samples` with codes up to `max_code`.
struct StagingLayout {
  bool narrow;     // 32-bit entries
  unsigned shift;  // bit position of the weight code
};
StagingLayout staging_layout(std::uint64_t num_samples, std::uint8_t max_code);

// Prepares the plan's buffers (reusing their memory) for one pass of a policy
// and returns the per-thread staging memory, which finish_plan() reads.
void* start_plan(EpochPlan& plan, StagingLayout layout);

// Runs a policy's pass `pass(PlanStaging<Entry>)`, which returns how many
// samples it kept, with the narrowest entries that fit.
template <typename Pass>
std::uint64_t stage_plan(EpochPlan& plan, std::uint8_t max_code, Pass&& pass) {
  const StagingLayout layout = staging_layout(plan.num_samples, max_code);
  void* memory = start_plan(plan, layout);
  std::uint8_t* codes = plan.codes_by_id.data();
  if (layout.narrow) {
    return pass(
        PlanStaging<std::uint32_t>{codes, static_cast<std::uint32_t*>(memory), layout.shift});
  }
  return pass(PlanStaging<std::uint64_t>{codes, static_cast<std::uint64_t*>(memory), layout.shift});
}

// Shuffles the first `kept` staged entries into plan.ids and plan.weight_codes
// (left empty when plan.palette has only weight 1); shuffle = false keeps the
// order of the pass.
void finish_plan(EpochPlan& plan, Rng& rng, std::uint64_t kept, bool shuffle = true);

// Plans of at least this many entries finish their buckets on two threads
// (2^24 by default; tests lower it to compare with one thread). Each bucket
// is shuffled by a generator of its own into its own place, so a plan does
// not depend on the number of threads.
std::uint64_t& parallel_plan_entries();

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
