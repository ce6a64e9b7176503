#include "uniform_policy.h"

#include "../plan_builder.h"
#include "infobatch_policy.h"
#include "winnow/error.h"

namespace winnow {

UniformPolicy::UniformPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  r_ = read_prune_ratio(reader, spec, 0.5);
  keep_ = reader.number("keep", 0.0);
  budget_ = spec.params.count("save") > 0;
  if (budget_) save_ = read_saving_budget(reader, spec, 0.0);
  reader.finish();
  const bool keep_given = spec.params.count("keep") > 0;
  WINNOW_THROW_IF_NOT(spec.params.count("r") + spec.params.count("keep") + (budget_ ? 1 : 0) <= 1,
                      "policy '{}': give one of r, keep and save", spec.to_string());
  WINNOW_THROW_IF_NOT(!keep_given || (keep_ > 0.0 && keep_ <= 1.0),
                      "policy '{}': keep must be in (0, 1] (or absent to match infobatch), got {}",
                      spec.to_string(), keep_);
}

PolicySpec UniformPolicy::spec() const {
  if (keep_ > 0.0) return PolicySpec{"uniform", {{"keep", format_number(keep_)}}};
  if (budget_) return PolicySpec{"uniform", {{"save", format_number(save_)}}};
  return PolicySpec{"uniform", {{"r", format_number(r_)}}};
}

void UniformPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  std::uint64_t keep_count = 0;
  double weight = 1.0;
  if (keep_ > 0.0) {
    keep_count = std::max<std::uint64_t>(1, detail::kept_count(n, keep_, rng));
    weight = 1.0 / keep_;
  } else if (budget_) {
    keep_count = std::max<std::uint64_t>(1, detail::kept_count(n, 1.0 - share_, rng));
    weight = static_cast<double>(n) / static_cast<double>(keep_count);
  } else {
    // The size infobatch(r) would plan, in expectation: all samples minus
    // the pruned share of the candidates.
    const std::uint64_t candidates = count_candidates(scores);
    keep_count = n - candidates + detail::kept_count(candidates, 1.0 - r_, rng);
    weight = static_cast<double>(n) / static_cast<double>(keep_count);
  }
  detail::ExactSubset subset(keep_count, n);
  const std::uint8_t code = weight == 1.0 ? 0 : 1;
  const std::uint64_t kept = detail::stage_plan(plan, 1, [&](auto staging) {
    std::uint64_t count = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (subset.take(rng)) {
        staging.codes[i] = code;
        staging.packed[count++] = staging.pack(i, code);
      }
    }
    return count;
  });
  plan.palette = {1.0f, static_cast<float>(weight)};
  detail::finish_plan(plan, rng, kept);
  plan.candidates = n;
}

}  // namespace winnow
