// The saving budget ("save=F", infobatch's default): the run as a whole skips
// the requested share of forward samples, each plan stays unbiased, and the
// budget survives resuming (docs/pruning.md#a-saving-budget).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "test_helpers.h"
#include "winnow/pruning/policy_registry.h"

using namespace winnow;

namespace {

// Losses with a long right tail, as a classifier's are: most samples well
// learned, a few hard. They shrink as the run goes on and vary per epoch.
std::vector<float> skewed_losses(std::uint64_t n, std::uint64_t epoch) {
  std::vector<float> losses = test::synthetic_losses(n, epoch + 1);
  const float scale = 1.0f / static_cast<float>(1 + epoch);
  for (float& l : losses) l = scale * std::pow(l, 4.0f);
  return losses;
}

// Trains a whole run: every served id gets its loss of the epoch.
void run(DynamicPruner& pruner) {
  const std::uint64_t n = pruner.num_samples();
  for (std::uint64_t epoch = 0; epoch < pruner.num_epochs(); ++epoch) {
    const std::vector<float> losses = skewed_losses(n, epoch);
    pruner.begin_epoch();
    while (auto batch = pruner.next_batch(256)) {
      std::vector<float> batch_losses;
      for (std::size_t i = 0; i < batch->size; ++i) batch_losses.push_back(losses[batch->ids[i]]);
      pruner.update(batch->ids, batch_losses.data(), batch->size);
    }
  }
}

}  // namespace

TEST_CASE("infobatch's default is a 40% saving budget; r keeps the paper's fixed ratio",
          "[budget]") {
  CHECK(DynamicPruner(100, 10, "infobatch").policy_spec() == "infobatch(delta=0.875,save=0.4)");
  CHECK(DynamicPruner(100, 10, "infobatch(r=0.5)").policy_spec() == "infobatch(delta=0.875,r=0.5)");
  CHECK(DynamicPruner(100, 10, "uniform(save=0.3)").policy_spec() ==
        "uniform(delta=0.875,save=0.3)");
  CHECK_THROWS_WITH(DynamicPruner(100, 10, "infobatch(r=0.5,save=0.4)"),
                    Catch::Contains("either r") && Catch::Contains("or save"));
  CHECK_THROWS_WITH(DynamicPruner(100, 10, "infobatch(save=0.9)"),
                    Catch::Contains("save must be in [0, 0.8]"));
  CHECK_THROWS_WITH(DynamicPruner(100, 10, "repb(save=0.4)"), Catch::Contains("save"));
}

TEST_CASE("a saving budget is met over the run within 0.02", "[budget]") {
  const std::uint64_t n = 20000;
  struct Case {
    std::string policy;
    std::uint64_t epochs;
    double target;
  };
  for (const Case& c :
       {Case{"infobatch", 15, 0.4}, Case{"infobatch(save=0.2)", 15, 0.2},
        Case{"infobatch(save=0.6)", 30, 0.6}, Case{"infobatch(save=0.5)", 8, 0.5},
        Case{"infobatch(save=0.4,delta=0.6)", 20, 0.4},
        Case{"infobatch(save=0.4,noisy=3)", 15, 0.4}, Case{"uniform(save=0.4)", 15, 0.4}}) {
    INFO(c.policy << ", " << c.epochs << " epochs");
    DynamicPruner pruner(n, c.epochs, c.policy, 7);
    run(pruner);
    const RunStats totals = pruner.totals();
    CHECK(totals.epochs == c.epochs);
    CHECK(std::abs(totals.saved_fraction() - c.target) < 0.02);
    for (const EpochStats& e : pruner.history()) {
      if (e.kind != PlanKind::Pruned) CHECK(e.forward_samples == n);
      // No plan skips more than the most one plan may.
      CHECK(e.saved_fraction() < DynamicPruner::kMaxBudgetShare + 0.02);
    }
  }
}

TEST_CASE("a budget's pruned epochs skip more as the run goes on", "[budget]") {
  DynamicPruner pruner(20000, 15, "infobatch", 5);
  run(pruner);
  std::vector<double> shares;
  for (const EpochStats& e : pruner.history()) {
    if (e.kind == PlanKind::Pruned) shares.push_back(e.saved_fraction());
  }
  REQUIRE(shares.size() == 12);
  // Weights 0.5 to 1.5 around a mean share of 0.5: about 0.25 first, 0.75 last.
  CHECK(std::abs(shares.front() - 0.25) < 0.03);
  CHECK(std::abs(shares.back() - 0.75) < 0.03);
  for (std::size_t i = 1; i < shares.size(); ++i) CHECK(shares[i] > shares[i - 1] - 0.02);
}

TEST_CASE("a budget out of reach saves what the pruned epochs allow, no more", "[budget]") {
  // Three epochs: warm-up, one pruned epoch, annealing. 40% of 3 epochs would
  // need 1.2 epochs skipped; the pruned epoch skips at most 80% of them.
  DynamicPruner pruner(20000, 3, "infobatch", 3);
  run(pruner);
  const auto& history = pruner.history();
  REQUIRE(history.size() == 3);
  CHECK(history[1].kind == PlanKind::Pruned);
  CHECK(std::abs(history[1].saved_fraction() - DynamicPruner::kMaxBudgetShare) < 0.02);
  CHECK(pruner.totals().saved_fraction() < 0.3);
}

TEST_CASE("a budget with no losses seen prunes nothing", "[budget]") {
  DynamicPruner pruner(1000, 6, "infobatch", 1);
  for (int epoch = 0; epoch < 6; ++epoch) {
    CHECK(pruner.begin_epoch().size() == 1000);
    while (pruner.next_batch(100)) {
    }
  }
}

TEST_CASE("plans aimed at a share stay unbiased, past the mean too", "[budget][unbiased]") {
  // 101 samples, 67 below the mean: a share of 0.4 prunes below the mean
  // (r = 40.4 / 67); 0.7 needs more candidates than the mean gives.
  const std::uint64_t n = 101;
  std::vector<float> values(n);
  for (std::uint64_t i = 0; i < n; ++i)
    values[i] = i < 67 ? 0.1f * static_cast<float>(i % 7) : 5.0f + 0.01f * static_cast<float>(i);
  ScoreTable scores(n);
  scores.assign(values.data(), n);
  for (double share : {0.4, 0.7}) {
    INFO("share " << share);
    auto policy = make_policy("infobatch(save=0.4)", n);
    policy->aim(share);
    const int epochs = 20000;
    std::vector<double> sum(n, 0.0);
    double kept = 0.0;
    for (int e = 0; e < epochs; ++e) {
      EpochPlan plan;
      plan.num_samples = n;
      Rng rng = Rng::for_epoch(5, static_cast<std::uint64_t>(e));
      policy->plan(scores, rng, plan);
      kept += static_cast<double>(plan.size());
      for (std::uint64_t pos = 0; pos < plan.size(); ++pos)
        sum[plan.ids[pos]] += plan.weight_at(pos);
    }
    // The mean plan skips the share asked for.
    CHECK(std::abs(1.0 - kept / epochs / n - share) < 0.005);
    // Weights of at most 1/(1 - 0.8) = 5: 6 sigma of the mean over 20000
    // epochs is 6 * sqrt(4 / 20000) = 0.085.
    for (std::uint64_t i = 0; i < n; ++i) CHECK(std::abs(sum[i] / epochs - 1.0) < 0.085);
  }
}

TEST_CASE("a budget in fixed-step mode skips its share in every pruned plan", "[budget]") {
  PrunerOptions options;
  options.num_samples = 10000;
  options.num_epochs = 10;
  options.policy = "infobatch(save=0.3)";
  options.step_budget = 400;
  options.batch_size = 100;
  DynamicPruner pruner(options);
  const std::vector<float> losses = skewed_losses(options.num_samples, 0);
  std::uint64_t steps = 0;
  while (auto batch = pruner.next_batch(100)) {
    std::vector<float> batch_losses;
    for (std::size_t i = 0; i < batch->size; ++i) batch_losses.push_back(losses[batch->ids[i]]);
    pruner.update(batch->ids, batch_losses.data(), batch->size);
    ++steps;
  }
  CHECK(steps == 400);
  std::uint64_t pruned_plans = 0;
  for (const EpochStats& e : pruner.history()) {
    if (e.kind != PlanKind::Pruned || e.forward_samples < e.planned_samples) continue;
    ++pruned_plans;
    CHECK(std::abs(e.saved_fraction() - 0.3) < 0.03);
  }
  CHECK(pruned_plans >= 2);
}
