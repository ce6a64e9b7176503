// "full": every sample every epoch, weight 1 (the baseline).
#include "full_policy.h"

#include "../plan_builder.h"

namespace winnow {

FullPolicy::FullPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  shuffle_ = reader.number("shuffle", 1.0) != 0.0;
  reader.finish();
}

PolicySpec FullPolicy::spec() const {
  return PolicySpec{"full", {{"shuffle", shuffle_ ? "1" : "0"}}};
}

void FullPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  detail::plan_all(scores.size(), rng, plan, shuffle_);
}

}  // namespace winnow
