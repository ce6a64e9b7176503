#include "ucb_policy.h"

#include <cmath>

#include "../plan_builder.h"
#include "winnow/error.h"

namespace winnow {

double read_prune_fraction(ParamReader& reader, const PolicySpec& spec, double fallback) {
  const double prune = reader.number("prune", fallback);
  WINNOW_THROW_IF_NOT(prune >= 0.0 && prune < 1.0,
                      "policy '{}': prune (fraction of samples skipped) must be in [0, 1), got {}",
                      spec.to_string(), prune);
  return prune;
}

UcbPolicy::UcbPolicy(const PolicySpec& spec, std::uint64_t num_samples) {
  ParamReader reader(spec);
  prune_ = read_prune_fraction(reader, spec, prune_);
  c_ = reader.number("c", c_);
  momentum_ = reader.number("m", momentum_);
  reader.finish();
  WINNOW_THROW_IF_NOT(c_ >= 0.0, "policy '{}': c must be >= 0, got {}", spec.to_string(), c_);
  WINNOW_THROW_IF_NOT(momentum_ >= 0.0 && momentum_ < 1.0,
                      "policy '{}': momentum m must be in [0, 1), got {}", spec.to_string(),
                      momentum_);
  spread_.assign(num_samples, 0.0f);
}

PolicySpec UcbPolicy::spec() const {
  return PolicySpec{"ucb",
                    {{"prune", format_number(prune_)},
                     {"c", format_number(c_)},
                     {"m", format_number(momentum_)}}};
}

void UcbPolicy::observe(const ScoreTable& before, const std::uint64_t* ids, const float* losses,
                        std::size_t count) {
  const auto m = static_cast<float>(momentum_);
  for (std::size_t i = 0; i < count; ++i) {
    const float deviation = losses[i] - before[ids[i]];
    spread_[ids[i]] = m * spread_[ids[i]] + (1.0f - m) * deviation * deviation;
  }
}

void UcbPolicy::set_state(const std::vector<float>& state) {
  WINNOW_THROW_IF_NOT(state.size() == spread_.size(),
                      "policy 'ucb': state holds {} values, expected {}", state.size(),
                      spread_.size());
  spread_ = state;
}

void UcbPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  std::vector<float> bound(n);
  const auto c = static_cast<float>(c_);
  for (std::uint64_t i = 0; i < n; ++i) bound[i] = scores[i] + c * std::sqrt(spread_[i]);
  const std::uint64_t keep = n - detail::floor_count(n, prune_);
  detail::TopK top(bound.data(), n, keep);
  const std::uint64_t kept = detail::stage_plan(plan, 0, [&](auto staging) {
    std::uint64_t count = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (top.take(bound[i])) staging.packed[count++] = staging.pack(i, 0);
    }
    return count;
  });
  plan.palette = {1.0f};
  detail::finish_plan(plan, rng, kept);
  plan.candidates = n;
}

}  // namespace winnow
