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
  detail::PlanBuilder builder(scores.size());
  for (std::uint64_t id = 0; id < scores.size(); ++id) builder.add(id, 0);
  builder.finish(rng, plan, shuffle_);
  plan.candidates = 0;
}

}  // namespace winnow
