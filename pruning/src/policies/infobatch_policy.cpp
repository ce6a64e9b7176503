#include "infobatch_policy.h"

#include <cmath>

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

float candidate_threshold(const ScoreTable& scores) {
  return static_cast<float>(scores.mean());
}

std::uint64_t count_candidates(const ScoreTable& scores) {
  const float threshold = candidate_threshold(scores);
  const float* s = scores.data();
  std::uint64_t count = 0;
  for (std::uint64_t i = 0; i < scores.size(); ++i) count += s[i] < threshold ? 1 : 0;
  return count;
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
  const float mean = candidate_threshold(scores);
  // Each candidate is kept with probability 1 - r (the paper's Eq. 3): a
  // 64-bit draw below keep_below. r = 0 keeps every candidate.
  const double keep = 1.0 - r_;
  const bool keep_all = r_ == 0.0;
  const auto keep_below = static_cast<std::uint64_t>(std::ldexp(keep, 64));

  std::uint64_t candidates = 0;
  // A local generator stays in registers (byte stores could alias a
  // reference's state), and the loop is branch-free: whether a sample is a
  // candidate is a coin flip to the CPU. Weight code 1 marks kept candidates.
  Rng local = rng;
  const std::uint64_t kept = detail::stage_plan(plan, 1, [&](auto staging) {
    std::uint8_t* codes = staging.codes;
    auto* packed = staging.packed;
    std::uint64_t count = 0;
    std::uint64_t kept_count = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const unsigned candidate = s[i] < mean ? 1u : 0u;
      const unsigned kept_candidate =
          candidate & ((local.next() < keep_below) | keep_all ? 1u : 0u);
      codes[i] = static_cast<std::uint8_t>(kept_candidate);
      packed[kept_count] = staging.pack(i, static_cast<std::uint8_t>(kept_candidate));
      kept_count += (candidate ^ 1u) | kept_candidate;
      count += candidate;
    }
    candidates = count;
    return kept_count;
  });
  rng = local;
  // Without candidates every weight is 1, which needs no per-sample codes.
  plan.palette = {1.0f};
  if (candidates > 0) plan.palette.push_back(static_cast<float>(1.0 / keep));
  detail::finish_plan(plan, rng, kept);
  plan.candidates = candidates;
}

}  // namespace winnow
