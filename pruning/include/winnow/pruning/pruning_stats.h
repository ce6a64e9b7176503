// Statistics of a pruned run, per epoch and cumulative.
//
// saved_fraction = 1 - forward_samples / full_forward_samples, where
// full_forward_samples counts every epoch of the full-data run (warm-up and
// annealing epochs included, which save nothing), as the InfoBatch paper
// reports its "total saving ratio".
#pragma once

#include <cstdint>

#include "winnow/pruning/epoch_plan.h"

namespace winnow {

struct EpochStats {
  std::uint64_t epoch = 0;
  PlanKind kind = PlanKind::Full;
  std::uint64_t planned_samples = 0;       // plan length
  std::uint64_t forward_samples = 0;       // samples actually served
  std::uint64_t full_forward_samples = 0;  // N
  std::uint64_t candidates = 0;            // samples the policy could have pruned
  double saved_fraction() const {
    return full_forward_samples == 0 ? 0.0
                                     : 1.0 - static_cast<double>(forward_samples) /
                                                 static_cast<double>(full_forward_samples);
  }
};

struct RunStats {
  std::uint64_t epochs = 0;  // finished epochs (passes)
  std::uint64_t forward_samples = 0;
  std::uint64_t full_forward_samples = 0;  // epoch mode: N per finished epoch;
                                           // fixed-step mode: N * num_epochs
  double saved_fraction() const {
    return full_forward_samples == 0 ? 0.0
                                     : 1.0 - static_cast<double>(forward_samples) /
                                                 static_cast<double>(full_forward_samples);
  }
};

}  // namespace winnow
