// With scores held fixed, every reweighting policy must give each sample an
// expected weighted count of exactly 1 per epoch: E[w_i * 1(i kept)] = 1.
#include <catch2/catch.hpp>

#include <cmath>

#include "test_helpers.h"
#include "winnow/pruning/policy_registry.h"

using namespace winnow;

namespace {

// Mean of w_i * 1(kept) per sample over `epochs` plans built from fixed scores.
std::vector<double> mean_weighted_counts(const std::string& spec, const ScoreTable& scores,
                                         int epochs) {
  auto policy = make_policy(spec, scores.size());
  std::vector<double> sum(scores.size(), 0.0);
  for (int e = 0; e < epochs; ++e) {
    EpochPlan plan;
    plan.num_samples = scores.size();
    Rng rng = Rng::for_epoch(99, static_cast<std::uint64_t>(e));
    policy->plan(scores, rng, plan);
    for (std::uint64_t pos = 0; pos < plan.size(); ++pos) sum[plan.ids[pos]] += plan.weight_at(pos);
  }
  for (double& s : sum) s /= epochs;
  return sum;
}

}  // namespace

TEST_CASE("reweighting policies are unbiased for fixed scores", "[unbiased]") {
  // 101 samples with skewed scores: 67 below the mean, so (1-r)|W| is not an
  // integer for r = 0.5 or 0.3 and the rounding must be unbiased too.
  const std::uint64_t n = 101;
  std::vector<float> values(n);
  for (std::uint64_t i = 0; i < n; ++i)
    values[i] = i < 67 ? 0.1f * static_cast<float>(i % 7) : 5.0f;
  ScoreTable scores(n);
  scores.assign(values.data(), n);

  const int epochs = 20000;
  for (const char* spec :
       {"infobatch(r=0.5)", "infobatch(r=0.3)", "infobatch(r=0.8)", "infobatch-quantile", "uniform",
        "uniform(keep=0.37)", "repb", "repb(r=0.3)"}) {
    INFO(spec);
    const auto mean = mean_weighted_counts(spec, scores, epochs);
    // Per sample, w*1(kept) has variance (1-p)/p <= 4 for p >= 0.2, so the
    // mean over 20000 epochs has standard deviation <= 0.0142; 6 sigma is 0.085.
    // A policy without rescaling would give p (0.5, 0.2, ...), far outside.
    double overall = 0.0;
    for (std::uint64_t i = 0; i < n; ++i) {
      CHECK(std::abs(mean[i] - 1.0) < 0.085);
      overall += mean[i];
    }
    // The average over samples is tighter still: 6 sigma / sqrt(101) < 0.01.
    CHECK(std::abs(overall / n - 1.0) < 0.01);
  }
}

TEST_CASE("hard-pruning policies are biased by design", "[unbiased]") {
  // ucb and epsilon-greedy keep high-loss samples with weight 1: low-loss ones
  // are under-counted. This documents that they do not claim unbiasedness.
  std::vector<float> values(100);
  for (std::uint64_t i = 0; i < 100; ++i) values[i] = static_cast<float>(i);
  ScoreTable scores(100);
  scores.assign(values.data(), 100);
  const auto mean = mean_weighted_counts("epsilon-greedy(prune=0.3,eps=0.1)", scores, 2000);
  CHECK(mean[0] < 0.5);
  CHECK(mean[99] == 1.0);
}
