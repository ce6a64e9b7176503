#include "seta_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../plan_builder.h"
#include "ucb_policy.h"
#include "winnow/error.h"

namespace winnow {

SetaPolicy::SetaPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  ParamReader reader(spec);
  prune_ = read_prune_fraction(reader, spec, prune_);
  const double groups = reader.number("groups", static_cast<double>(groups_));
  window_ = reader.number("window", window_);
  reader.finish();
  WINNOW_THROW_IF_NOT(groups >= 1.0 && groups <= 255.0 && groups == std::floor(groups),
                      "policy '{}': groups must be a whole number from 1 to 255, got {}",
                      spec.to_string(), groups);
  WINNOW_THROW_IF_NOT(window_ > 0.0 && window_ <= 1.0,
                      "policy '{}': window (share of the clusters kept) must be in (0, 1], got {}",
                      spec.to_string(), window_);
  groups_ = static_cast<std::uint64_t>(groups);
}

PolicySpec SetaPolicy::spec() const {
  return PolicySpec{"seta",
                    {{"prune", format_number(prune_)},
                     {"groups", format_number(static_cast<double>(groups_))},
                     {"window", format_number(window_)}}};
}

void SetaPolicy::set_state(const std::vector<float>& state) {
  WINNOW_THROW_IF_NOT(state.size() == 1 && state[0] >= 0.0f && state[0] == std::floor(state[0]),
                      "policy '{}': state must be one whole number (plans made), got {} values",
                      spec().to_string(), state.size());
  plans_made_ = static_cast<std::uint64_t>(state[0]);
}

std::vector<float> kmeans_boundaries(const std::vector<float>& values, std::uint64_t k) {
  if (k <= 1 || values.empty()) return {};
  const auto [low_it, high_it] = std::minmax_element(values.begin(), values.end());
  const double low = *low_it;
  const double high = *high_it;
  if (!(high > low)) return {};  // a single value: no boundaries to find

  // Histogram: per non-empty bin its first edge, count, sum and sum of squares.
  constexpr std::size_t kBins = 1024;
  const double scale = static_cast<double>(kBins) / (high - low);
  std::vector<double> count(kBins, 0.0);
  std::vector<double> sum(kBins, 0.0);
  std::vector<double> squares(kBins, 0.0);
  for (float v : values) {
    const auto b = std::min<std::size_t>(kBins - 1, static_cast<std::size_t>((v - low) * scale));
    count[b] += 1.0;
    sum[b] += v;
    squares[b] += static_cast<double>(v) * v;
  }
  std::vector<std::size_t> bins;  // the non-empty ones
  for (std::size_t b = 0; b < kBins; ++b) {
    if (count[b] > 0.0) bins.push_back(b);
  }
  const std::size_t m = bins.size();
  // Prefix sums over the non-empty bins: the squared error of a run of bins
  // around its mean is O(1).
  std::vector<double> pc(m + 1, 0.0), ps(m + 1, 0.0), pq(m + 1, 0.0);
  for (std::size_t j = 0; j < m; ++j) {
    pc[j + 1] = pc[j] + count[bins[j]];
    ps[j + 1] = ps[j] + sum[bins[j]];
    pq[j + 1] = pq[j] + squares[bins[j]];
  }
  auto error = [&](std::size_t from, std::size_t to) {  // bins [from, to)
    const double c = pc[to] - pc[from];
    const double s = ps[to] - ps[from];
    return (pq[to] - pq[from]) - s * s / c;
  };
  // Optimal k-means in one dimension by dynamic programming (as Ckmeans.1d.dp):
  // best[c][j] is the least error of splitting the first j bins into c + 1
  // runs; start[c][j] where the last run begins.
  const std::size_t clusters = std::min<std::size_t>(k, m);
  std::vector<std::vector<double>> best(clusters, std::vector<double>(m + 1, 0.0));
  std::vector<std::vector<std::size_t>> start(clusters, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t j = 1; j <= m; ++j) best[0][j] = error(0, j);
  for (std::size_t c = 1; c < clusters; ++c) {
    for (std::size_t j = c + 1; j <= m; ++j) {
      best[c][j] = std::numeric_limits<double>::infinity();
      for (std::size_t i = c; i < j; ++i) {
        const double e = best[c - 1][i] + error(i, j);
        if (e < best[c][j]) {
          best[c][j] = e;
          start[c][j] = i;
        }
      }
    }
  }
  // Walk back: each run's first bin gives a boundary (its lower edge).
  std::vector<float> borders;
  std::size_t end = m;
  for (std::size_t c = clusters - 1; c > 0; --c) {
    const std::size_t first = start[c][end];
    borders.push_back(static_cast<float>(low + static_cast<double>(bins[first]) / scale));
    end = first;
  }
  std::reverse(borders.begin(), borders.end());
  // Fewer distinct bins than clusters: the missing (hardest) clusters stay empty.
  while (borders.size() + 1 < k) borders.push_back(std::numeric_limits<float>::infinity());
  return borders;
}

void SetaPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const float* s = scores.data();

  // 1. A uniform random subset of floor((1 - prune) N), at least one sample.
  const std::uint64_t subset_size = std::max<std::uint64_t>(1, n - detail::floor_count(n, prune_));
  std::vector<std::uint8_t> chosen(n, 0);
  std::vector<float> subset_scores;
  subset_scores.reserve(subset_size);
  detail::ExactSubset subset(subset_size, n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (subset.take(rng)) {
      chosen[i] = 1;
      subset_scores.push_back(s[i]);
    }
  }

  // 2. Clusters by score, easy to hard; 3. the window's clusters this epoch.
  const std::vector<float> borders = kmeans_boundaries(subset_scores, groups_);
  const auto width = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::nearbyint(static_cast<double>(groups_) * window_)), 1,
      groups_);
  const std::uint64_t first = plans_made_ == 0 ? 0 : plans_made_ % (groups_ - width + 1);
  const std::uint64_t last = plans_made_ == 0 ? groups_ : first + width;  // exclusive
  ++plans_made_;

  // With a single score value k-means has nothing to split: like the
  // reference, the subset is then cut into `groups` equal runs in id order.
  const bool by_position = borders.empty();
  auto cluster_of = [&](std::uint64_t id, std::uint64_t position) -> std::uint64_t {
    if (by_position) return position * groups_ / subset_size;
    return static_cast<std::uint64_t>(std::upper_bound(borders.begin(), borders.end(), s[id]) -
                                      borders.begin());
  };
  const std::uint64_t kept = detail::stage_plan(plan, 0, [&](auto staging) {
    std::uint64_t count = 0;
    std::uint64_t position = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (chosen[i] == 0) continue;
      const std::uint64_t cluster = cluster_of(i, position++);
      if (cluster >= first && cluster < last) staging.packed[count++] = staging.pack(i, 0);
    }
    if (count == 0) staging.packed[count++] = staging.pack(rng.below(n), 0);  // never empty
    return count;
  });
  plan.palette = {1.0f};
  detail::finish_plan(plan, rng, kept);
  plan.candidates = n;
}

}  // namespace winnow
