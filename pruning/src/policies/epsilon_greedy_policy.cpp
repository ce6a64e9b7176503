#include "epsilon_greedy_policy.h"

#include <cmath>

#include "../plan_builder.h"
#include "ucb_policy.h"
#include "winnow/error.h"

namespace winnow {

EpsilonGreedyPolicy::EpsilonGreedyPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  prune_ = read_prune_fraction(reader, spec, prune_);
  epsilon_ = reader.number("eps", epsilon_);
  reader.finish();
  WINNOW_THROW_IF_NOT(epsilon_ >= 0.0 && epsilon_ <= 1.0,
                      "policy '{}': eps must be in [0, 1], got {}", spec.to_string(), epsilon_);
}

PolicySpec EpsilonGreedyPolicy::spec() const {
  return PolicySpec{"epsilon-greedy",
                    {{"prune", format_number(prune_)}, {"eps", format_number(epsilon_)}}};
}

void EpsilonGreedyPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const std::uint64_t keep = n - detail::floor_count(n, prune_);
  const auto greedy =
      static_cast<std::uint64_t>(std::llround((1.0 - epsilon_) * static_cast<double>(keep)));
  detail::TopK top(scores.data(), n, greedy);
  detail::ExactSubset explore(keep - greedy, n - greedy);
  const std::uint64_t kept = detail::stage_plan(plan, 0, [&](auto staging) {
    std::uint64_t count = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (top.take(scores[i]) || explore.take(rng)) staging.packed[count++] = staging.pack(i, 0);
    }
    return count;
  });
  plan.palette = {1.0f};
  detail::finish_plan(plan, rng, kept);
  plan.candidates = n;
}

}  // namespace winnow
