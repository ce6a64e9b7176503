#include "winnow/pruning/weight_table.h"

#include "winnow/error.h"
#include "winnow/pruning/epoch_plan.h"

namespace winnow {

void WeightTable::assign(const EpochPlan& plan) {
  WINNOW_THROW_IF_NOT(plan.num_samples == num_samples_,
                      "WeightTable: plan for {} samples given to a table of {}", plan.num_samples,
                      num_samples_);
  if (plan.weight_codes.empty()) {
    reset_to_one();
    return;
  }
  palette_ = plan.palette;
  codes_.assign(num_samples_, 0);
  for (std::uint64_t pos = 0; pos < plan.ids.size(); ++pos) {
    codes_[plan.ids[pos]] = plan.weight_codes[pos];
  }
}

void WeightTable::take(EpochPlan& plan) {
  if (plan.weight_codes.empty() || plan.codes_by_id.size() != num_samples_) {
    plan.codes_by_id.clear();
    assign(plan);
    return;
  }
  palette_ = plan.palette;
  // The old codes go to the plan, whose buffers the next plan reuses.
  codes_.swap(plan.codes_by_id);
  plan.codes_by_id.clear();
}

void WeightTable::reset_to_one() {
  codes_.clear();
  codes_.shrink_to_fit();
  palette_.assign(1, 1.0f);
}

}  // namespace winnow
