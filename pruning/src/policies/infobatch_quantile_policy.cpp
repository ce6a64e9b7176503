#include "infobatch_quantile_policy.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "../plan_builder.h"
#include "winnow/error.h"

namespace winnow {

InfoBatchQuantilePolicy::InfoBatchQuantilePolicy(const PolicySpec& spec,
                                                 std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  percentiles_ = reader.numbers("percentiles", percentiles_);
  keep_ = reader.numbers("keep", keep_);
  reader.finish();
  const std::string text = spec.to_string();
  WINNOW_THROW_IF_NOT(!percentiles_.empty() && percentiles_.size() == keep_.size(),
                      "policy '{}': percentiles and keep need the same, non-zero number of "
                      "values, got {} and {}",
                      text, percentiles_.size(), keep_.size());
  WINNOW_THROW_IF_NOT(percentiles_.size() < 255, "policy '{}': too many buckets", text);
  for (std::size_t b = 0; b < percentiles_.size(); ++b) {
    WINNOW_THROW_IF_NOT(percentiles_[b] > 0.0 && percentiles_[b] < 100.0 &&
                            (b == 0 || percentiles_[b] > percentiles_[b - 1]),
                        "policy '{}': percentiles must increase strictly within (0, 100)", text);
    WINNOW_THROW_IF_NOT(keep_[b] > 0.0 && keep_[b] <= 1.0,
                        "policy '{}': keep ratios must be in (0, 1], got {}", text, keep_[b]);
  }
}

static std::string join_numbers(const std::vector<double>& values) {
  std::vector<std::string> parts;
  for (double v : values) parts.push_back(format_number(v));
  return fmt::format("{}", fmt::join(parts, ":"));
}

PolicySpec InfoBatchQuantilePolicy::spec() const {
  return PolicySpec{"infobatch-quantile",
                    {{"percentiles", join_numbers(percentiles_)}, {"keep", join_numbers(keep_)}}};
}

void InfoBatchQuantilePolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const float* s = scores.data();
  const std::size_t buckets = percentiles_.size();

  // Bucket edges: the score at each percentile (nearest rank).
  std::vector<float> sorted(s, s + n);
  std::vector<float> edges(buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    const auto rank = static_cast<std::uint64_t>(percentiles_[b] / 100.0 * static_cast<double>(n));
    const auto nth = sorted.begin() + static_cast<std::ptrdiff_t>(std::min(rank, n - 1));
    std::nth_element(sorted.begin(), nth, sorted.end());
    edges[b] = *nth;
  }
  sorted.clear();
  sorted.shrink_to_fit();
  // Bucket of a score: the first edge it lies strictly below; `buckets` means "always kept".
  auto bucket_of = [&](float score) {
    std::size_t b = 0;
    while (b < buckets && !(score < edges[b])) ++b;
    return b;
  };

  std::vector<std::uint64_t> count(buckets + 1, 0);
  for (std::uint64_t i = 0; i < n; ++i) ++count[bucket_of(s[i])];
  std::vector<detail::ExactSubset> subsets;
  for (std::size_t b = 0; b < buckets; ++b) {
    subsets.emplace_back(detail::kept_count(count[b], keep_[b], rng), count[b]);
  }

  const auto max_code = static_cast<std::uint8_t>(buckets);
  const std::uint64_t kept = detail::stage_plan(plan, max_code, [&](auto staging) {
    std::uint64_t taken = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::size_t b = bucket_of(s[i]);
      if (b == buckets || subsets[b].take(rng)) {
        const auto code = static_cast<std::uint8_t>(b == buckets ? 0 : b + 1);
        staging.codes[i] = code;
        staging.packed[taken++] = staging.pack(i, code);
      }
    }
    return taken;
  });
  plan.palette = {1.0f};
  for (double k : keep_) plan.palette.push_back(static_cast<float>(1.0 / k));
  detail::finish_plan(plan, rng, kept);
  plan.candidates = n - count[buckets];
}

}  // namespace winnow
