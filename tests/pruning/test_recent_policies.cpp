// SeTa, the RePB-style policy and batch-loss-score mode (docs/pruning.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <map>
#include <set>

#include "../../pruning/src/policies/seta_policy.h"
#include "test_helpers.h"
#include "winnow/pruning/policy_registry.h"

using namespace winnow;

namespace {

EpochPlan next_plan(Policy& policy, const ScoreTable& scores, std::uint64_t epoch) {
  EpochPlan plan;
  plan.num_samples = scores.size();
  Rng rng = Rng::for_epoch(3, epoch);
  policy.plan(scores, rng, plan);
  return plan;
}

}  // namespace

TEST_CASE("1-D k-means puts its boundaries between separated groups", "[seta]") {
  std::vector<float> values;
  for (int i = 0; i < 300; ++i) values.push_back(1.0f + 0.001f * static_cast<float>(i % 10));
  for (int i = 0; i < 100; ++i) values.push_back(5.0f + 0.001f * static_cast<float>(i % 10));
  for (int i = 0; i < 50; ++i) values.push_back(9.0f);
  const std::vector<float> borders = kmeans_boundaries(values, 3);
  REQUIRE(borders.size() == 2);
  CHECK(borders[0] > 1.01f);
  CHECK(borders[0] <= 5.0f);
  CHECK(borders[1] > 5.01f);
  CHECK(borders[1] <= 9.0f);
  CHECK(kmeans_boundaries(std::vector<float>(10, 2.0f), 4).empty());
  CHECK(kmeans_boundaries(values, 1).empty());
}

TEST_CASE("seta keeps a random subset, then a window of loss clusters sliding easy to hard",
          "[seta]") {
  const ScoreTable scores = test::ramp_scores(1000);
  // prune=0: the subset is everything; 5 clusters of about 200 ramp values;
  // a window of 4 clusters alternates between dropping the hardest and the
  // easiest (slide 1), after a first plan that keeps all of them.
  auto policy = make_policy("seta(prune=0,groups=5,window=0.8)", 1000);
  const EpochPlan first = next_plan(*policy, scores, 1);
  CHECK(first.size() == 1000);
  const EpochPlan second = next_plan(*policy, scores, 2);  // clusters 1..4
  const EpochPlan third = next_plan(*policy, scores, 3);   // clusters 0..3
  CHECK(test::is_subset_permutation(second));
  CHECK(*std::min_element(second.ids.begin(), second.ids.end()) >= 150);
  CHECK(*std::max_element(second.ids.begin(), second.ids.end()) == 999);
  CHECK(*std::min_element(third.ids.begin(), third.ids.end()) == 0);
  CHECK(*std::max_element(third.ids.begin(), third.ids.end()) <= 850);
  CHECK(second.size() > 700);
  CHECK(second.size() < 900);
  CHECK(second.weight_codes.empty());  // no reweighting: every weight is 1
  CHECK(policy->state() == std::vector<float>{3.0f});

  // The defaults: a random 90% first; each later plan keeps 4 of 5 clusters.
  auto defaults = make_policy("seta", 1000);
  CHECK(defaults->spec().to_string() == "seta(groups=5,prune=0.1,window=0.9)");
  CHECK(next_plan(*defaults, scores, 1).size() == 900);
  const EpochPlan later = next_plan(*defaults, scores, 2);
  CHECK(later.size() < 900);
  CHECK(later.size() > 500);

  // Equal scores: the subset is cut into equal runs instead of clusters.
  const ScoreTable flat(1000, 2.0f);
  auto on_flat = make_policy("seta(prune=0,groups=5,window=0.8)", 1000);
  next_plan(*on_flat, flat, 1);
  CHECK(next_plan(*on_flat, flat, 2).size() == 800);

  CHECK_THROWS_WITH(make_policy("seta(groups=2.5)", 10), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(make_policy("seta(window=0)", 10), Catch::Contains("window"));
  CHECK_THROWS_WITH(make_policy("seta(prune=1)", 10), Catch::Contains("prune"));
}

TEST_CASE("repb compares scores only within their window of observations", "[repb]") {
  // Window 1 saw losses 10..13 (mean 11.5), window 2 saw 1..4 (mean 2.5):
  // against the global mean (7) all of window 2 and none of window 1 would be
  // candidates; within windows the two lowest of each are.
  const std::uint64_t n = 8;
  auto policy = make_policy("repb(window=4,r=0.5)", n);
  ScoreTable scores(n);
  const std::vector<std::uint64_t> ids = test::iota_ids(n);
  const std::vector<float> losses{10, 11, 12, 13, 1, 2, 3, 4};
  policy->observe(scores, ids.data(), losses.data(), n);
  scores.update(ids.data(), losses.data(), n);
  std::set<std::uint64_t> ever_pruned;
  for (std::uint64_t epoch = 1; epoch <= 40; ++epoch) {
    const EpochPlan plan = next_plan(*policy, scores, epoch);
    CHECK(plan.candidates == 4);
    const auto w = test::weights_by_id(plan);
    for (std::uint64_t id : {2, 3, 6, 7}) CHECK(w.count(id) == 1);  // never candidates
    for (std::uint64_t id : {0, 1, 4, 5}) {
      if (w.count(id) == 0) ever_pruned.insert(id);
    }
  }
  CHECK(ever_pruned == std::set<std::uint64_t>{0, 1, 4, 5});
}

TEST_CASE("repb weights a kept sample by the inverse of its selection frequency", "[repb]") {
  const ScoreTable scores = test::ramp_scores(1000);  // ids below 500 are candidates
  auto policy = make_policy("repb(r=0.5)", 1000);
  std::vector<double> weighted(1000, 0.0);
  std::vector<int> kept(1000, 0);
  const int plans = 60;
  for (int e = 1; e <= plans; ++e) {
    const EpochPlan plan = next_plan(*policy, scores, static_cast<std::uint64_t>(e));
    for (std::uint64_t pos = 0; pos < plan.size(); ++pos) {
      const std::uint64_t id = plan.ids[pos];
      ++kept[id];
      // Weight = plans so far / times kept so far, exactly (E <= 254).
      CHECK(plan.weight_at(pos) == Approx(static_cast<double>(e) / kept[id]));
      weighted[id] += plan.weight_at(pos);
    }
  }
  for (std::uint64_t id = 500; id < 1000; ++id) CHECK(weighted[id] == plans);  // always kept
  // Candidates: the weighted count tracks the number of plans.
  double mean = 0.0;
  for (std::uint64_t id = 0; id < 500; ++id) mean += weighted[id] / plans / 500.0;
  CHECK(mean == Approx(1.0).margin(0.1));
  // The state round-trips: a restored policy makes the same next plan.
  auto restored = make_policy("repb(r=0.5)", 1000);
  restored->set_state(policy->state());
  CHECK(next_plan(*restored, scores, 99).ids == next_plan(*policy, scores, 99).ids);
  CHECK_THROWS_WITH(restored->set_state({1.0f}), Catch::Contains("expected 2004"));
  CHECK_THROWS_WITH(make_policy("repb(window=0)", 10), Catch::Contains("window"));
}

TEST_CASE("seta and repb keep fixed-step mode and known epoch lengths", "[seta][repb]") {
  for (const char* spec : {"seta", "repb(window=200)"}) {
    INFO(spec);
    PrunerOptions options;
    options.num_samples = 1000;
    options.num_epochs = 10;
    options.policy = spec;
    options.step_budget = 40;
    options.batch_size = 100;
    DynamicPruner stepped(options);
    const auto losses = test::synthetic_losses(1000, 4);
    std::uint64_t steps = 0;
    while (auto b = stepped.next_batch(100)) {
      std::vector<float> l;
      for (std::size_t i = 0; i < b->size; ++i) l.push_back(losses[b->ids[i]]);
      stepped.update(b->ids, l.data(), b->size);
      ++steps;
    }
    CHECK(steps == 40);

    DynamicPruner epochs(1000, 6, spec, 5);
    for (int e = 0; e < 6; ++e) {
      const std::uint64_t announced = epochs.begin_epoch().size();
      const std::uint64_t steps_announced = epochs.steps_this_epoch(64);
      std::uint64_t served = 0;
      std::uint64_t batches = 0;
      while (auto b = epochs.next_batch(64)) {
        std::vector<float> l;
        for (std::size_t i = 0; i < b->size; ++i) l.push_back(losses[b->ids[i]]);
        epochs.update(b->ids, l.data(), b->size);
        served += b->size;
        ++batches;
      }
      CHECK(served == announced);
      CHECK(batches == steps_announced);
    }
    CHECK(epochs.totals().saved_fraction() > 0.0);
  }
}

TEST_CASE("batch-loss-score mode blends a batch's mean loss into its samples' scores", "[bls]") {
  DynamicPruner pruner(10, 5, "infobatch", 1);
  const std::vector<std::uint64_t> batch{2, 5, 7};
  pruner.update_batch_loss(batch.data(), batch.size(), 3.0f, 0.75f);
  CHECK(pruner.scores()[2] == Approx(0.75 * 1.0 + 0.25 * 3.0));
  CHECK(pruner.scores()[7] == Approx(1.5));
  CHECK(pruner.scores()[0] == 1.0f);                // not in the batch
  pruner.update_batch_loss(batch.data(), 2, 1.5f);  // default momentum 0.9
  CHECK(pruner.scores()[5] == Approx(0.9 * 1.5 + 0.1 * 1.5));

  CHECK_THROWS_WITH(pruner.update_batch_loss(batch.data(), 3, std::nanf(""), 0.9f),
                    Catch::Contains("must be finite"));
  CHECK_THROWS_WITH(pruner.update_batch_loss(batch.data(), 3, -1.0f, 0.9f),
                    Catch::Contains("must not be negative"));
  CHECK_THROWS_WITH(pruner.update_batch_loss(batch.data(), 3, 1.0f, 1.0f),
                    Catch::Contains("momentum"));
  CHECK(pruner.scores()[7] == Approx(1.5));  // a rejected call changes nothing

  // The mean weight rescales a batch's mean loss: 1 while nothing is pruned.
  pruner.begin_epoch();
  CHECK(pruner.mean_weight(batch.data(), 3) == 1.0f);

  // A whole run on batch losses alone: the scores still separate the
  // samples whose batches were harder, and the policy prunes.
  DynamicPruner bls(2000, 8, "infobatch", 3);
  const auto losses = test::synthetic_losses(2000, 6);
  for (int e = 0; e < 8; ++e) {
    bls.begin_epoch();
    while (auto b = bls.next_batch(16)) {
      double mean = 0.0;
      for (std::size_t i = 0; i < b->size; ++i) mean += losses[b->ids[i]];
      bls.update_batch_loss(b->ids, b->size, static_cast<float>(mean / b->size));
      const float w = bls.mean_weight(b->ids, b->size);
      CHECK(w >= 1.0f);
    }
  }
  CHECK(bls.totals().saved_fraction() > 0.05);
}
