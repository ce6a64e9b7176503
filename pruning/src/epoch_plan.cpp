#include "winnow/pruning/epoch_plan.h"

#include "winnow/error.h"

namespace winnow {

const char* to_string(PlanKind kind) {
  switch (kind) {
    case PlanKind::Full:
      return "full";
    case PlanKind::Warmup:
      return "warmup";
    case PlanKind::Pruned:
      return "pruned";
    case PlanKind::Annealing:
      return "annealing";
  }
  return "unknown";
}

std::uint64_t steps_for(std::uint64_t samples, std::uint64_t batch_size) {
  WINNOW_THROW_IF_NOT(batch_size > 0, "batch_size must be positive, got 0");
  return (samples + batch_size - 1) / batch_size;
}

std::uint64_t EpochPlan::steps(std::uint64_t batch_size) const {
  return steps_for(ids.size(), batch_size);
}

}  // namespace winnow
