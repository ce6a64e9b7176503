// EpochPlan: the ordered sample ids one epoch visits, each with its loss weight.
//
// A plan is built once, before its epoch starts, so its length (and the number
// of optimizer steps it makes) is known in advance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace winnow {

// Why an epoch trains on what it trains on.
enum class PlanKind : std::uint8_t {
  Full = 0,       // the policy does not prune (policy "full")
  Warmup = 1,     // no scores observed yet: every sample, weight 1
  Pruned = 2,     // the policy chose a subset
  Annealing = 3,  // last (1 - delta) of training: every sample, weight 1
};

const char* to_string(PlanKind kind);

struct EpochPlan {
  std::uint64_t epoch = 0;
  PlanKind kind = PlanKind::Full;
  std::uint64_t num_samples = 0;           // N, the size of the full data set
  std::vector<std::uint64_t> ids;          // visiting order, no repeats
  std::vector<std::uint8_t> weight_codes;  // empty: every weight is 1
  std::vector<float> palette{1.0f};        // palette[0] is always 1
  std::uint64_t candidates = 0;            // samples the policy considered for pruning
  // Optional: the weight code of every sample id (N bytes), which the
  // built-in policies produce on the way; WeightTable takes it instead of
  // scattering weight_codes by id (a random write per planned sample).
  std::vector<std::uint8_t> codes_by_id;

  std::uint64_t size() const { return ids.size(); }
  float weight_at(std::uint64_t position) const {
    return weight_codes.empty() ? 1.0f : palette[weight_codes[position]];
  }
  // Optimizer steps to visit the plan; the last batch may be short.
  std::uint64_t steps(std::uint64_t batch_size) const;
};

// ceil(samples / batch_size); throws on batch_size == 0.
std::uint64_t steps_for(std::uint64_t samples, std::uint64_t batch_size);

}  // namespace winnow
