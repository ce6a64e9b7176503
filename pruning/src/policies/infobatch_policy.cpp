#include "infobatch_policy.h"

#include "../plan_builder.h"
#include "winnow/error.h"

namespace winnow {

double read_prune_ratio(ParamReader& reader, const PolicySpec& spec, double fallback) {
  const double r = reader.number("r", fallback);
  WINNOW_THROW_IF_NOT(r >= 0.0 && r < 1.0,
                      "policy '{}': prune ratio r must be in [0, 1), got {} (r is the share "
                      "of below-mean samples skipped; r -> 1 makes the weight 1/(1-r) explode)",
                      spec.to_string(), r);
  return r;
}

InfoBatchPolicy::InfoBatchPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  r_ = read_prune_ratio(reader, spec, 0.5);
  reader.finish();
}

PolicySpec InfoBatchPolicy::spec() const {
  return PolicySpec{"infobatch", {{"r", format_number(r_)}}};
}

void InfoBatchPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const float* s = scores.data();
  const double mean = scores.mean();

  std::uint64_t candidates = 0;
  for (std::uint64_t i = 0; i < n; ++i) candidates += s[i] < mean ? 1 : 0;
  const std::uint64_t kept_candidates = detail::kept_count(candidates, 1.0 - r_, rng);

  detail::PlanBuilder builder(n - candidates + kept_candidates, n, rng);
  detail::ExactSubset subset(kept_candidates, candidates);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!(s[i] < mean)) {
      builder.add(i, 0);
    } else if (subset.take(rng)) {
      builder.add(i, 1);
    }
  }
  plan.palette = {1.0f, static_cast<float>(1.0 / (1.0 - r_))};
  builder.finish(plan);
  plan.candidates = candidates;
}

}  // namespace winnow
