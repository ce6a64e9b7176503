#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "plan_builder.h"  // internal: the two-thread threshold
#include "test_helpers.h"
#include "winnow/pruning/policy_registry.h"

using namespace winnow;

namespace {

EpochPlan plan_with(const std::string& spec, const ScoreTable& scores, std::uint64_t epoch = 1) {
  auto policy = make_policy(spec, scores.size());
  EpochPlan plan;
  plan.num_samples = scores.size();
  Rng rng = Rng::for_epoch(7, epoch);
  policy->plan(scores, rng, plan);
  return plan;
}

}  // namespace

TEST_CASE("every policy plans a shuffled permutation of a subset", "[policies]") {
  const ScoreTable scores = test::ramp_scores(2000);
  for (const char* spec : {"full", "infobatch", "infobatch-quantile", "uniform",
                           "uniform(keep=0.3)", "ucb", "epsilon-greedy", "seta", "repb"}) {
    INFO(spec);
    const EpochPlan plan = plan_with(spec, scores);
    CHECK(test::is_subset_permutation(plan));
    CHECK(plan.size() > 0);
    CHECK_FALSE(std::is_sorted(plan.ids.begin(), plan.ids.end()));
    CHECK((plan.weight_codes.empty() || plan.weight_codes.size() == plan.size()));
  }
  const EpochPlan sequential = plan_with("full(shuffle=0)", scores);
  CHECK(sequential.ids == test::iota_ids(2000));
}

TEST_CASE("infobatch keeps every above-mean sample and (1-r) of the below-mean ones",
          "[policies]") {
  const ScoreTable scores = test::ramp_scores(1000);  // mean 499.5: ids 0..499 are candidates
  const EpochPlan plan = plan_with("infobatch(r=0.5)", scores);
  CHECK(plan.candidates == 500);
  const auto w = test::weights_by_id(plan);
  for (std::uint64_t id = 500; id < 1000; ++id) {
    REQUIRE(w.count(id) == 1);
    CHECK(w.at(id) == 1.0f);
  }
  int kept_candidates = 0;
  for (const auto& [id, weight] : w) {
    if (id < 500) {
      ++kept_candidates;
      CHECK(weight == 2.0f);  // 1 / (1 - r)
    }
  }
  // Each candidate is kept with probability 1 - r: Binomial(500, 0.5) has
  // mean 250 and sd 11.2; 5 sd either side.
  CHECK(std::abs(kept_candidates - 250) < 56);
  CHECK(plan.size() == 500 + static_cast<std::uint64_t>(kept_candidates));

  // Over many epochs the kept share converges to 1 - r.
  std::uint64_t kept_total = 0;
  for (std::uint64_t epoch = 0; epoch < 200; ++epoch) {
    kept_total += plan_with("infobatch(r=0.3)", scores, epoch).size() - 500;
  }
  CHECK(static_cast<double>(kept_total) / (200.0 * 500.0) == Approx(0.7).margin(0.01));
  CHECK(plan_with("infobatch(r=0.3)", scores).palette.at(1) == Approx(1.0 / 0.7));
  // r = 0 keeps everything, with weight 1.
  CHECK(plan_with("infobatch(r=0)", scores).size() == 1000);
}

// InfoBatch's pass compares four samples at a time with SSE2 on x86-64 and
// one at a time elsewhere (and for the tail); both must make the decisions
// its comment documents, from the same draws: sample i's draw is the low
// (even i) or high (odd i) half of the generator's (i / 2)-th output, and a
// candidate (score below the mean) is kept when that draw is below
// floor((1 - r) 2^32). Sizes that are not multiples of four reach the tail.
TEST_CASE("infobatch keeps exactly the candidates its documented draws select", "[policies]") {
  for (const std::uint64_t n : {1u, 2u, 3u, 4u, 5u, 7u, 1001u, 4099u}) {
    for (const double r : {0.0, 0.3, 0.5, 0.9}) {
      INFO("n = " << n << ", r = " << r);
      const std::vector<float> losses = test::synthetic_losses(n, n);
      ScoreTable scores(n);
      scores.assign(losses.data(), n);
      const std::string spec = "infobatch(r=" + std::to_string(r) + ")";
      const EpochPlan plan = plan_with(spec, scores, 3);

      const auto mean = static_cast<float>(scores.mean());
      const auto keep_below =
          std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ldexp(1.0 - r, 32)));
      Rng rng = Rng::for_epoch(7, 3);  // plan_with's generator
      std::uint64_t bits = 0;
      std::uint64_t candidates = 0;
      std::map<std::uint64_t, bool> expected;  // id -> kept as a weighted candidate
      for (std::uint64_t i = 0; i < n; ++i) {
        if (i % 2 == 0) bits = rng.next();
        const auto draw = static_cast<std::uint32_t>(i % 2 == 0 ? bits : bits >> 32);
        const bool candidate = losses[i] < mean;
        candidates += candidate ? 1 : 0;
        if (!candidate) {
          expected[i] = false;
        } else if (draw < keep_below) {
          expected[i] = true;
        }
      }
      CHECK(plan.candidates == candidates);
      const auto weights = test::weights_by_id(plan);
      REQUIRE(weights.size() == expected.size());
      const float candidate_weight = static_cast<float>(std::ldexp(1.0, 32) / keep_below);
      for (const auto& [id, weighted] : expected) {
        REQUIRE(weights.count(id) == 1);
        CHECK(weights.at(id) == (weighted ? candidate_weight : 1.0f));
      }
    }
  }
}

TEST_CASE("infobatch prunes nothing while all scores are equal", "[policies]") {
  const ScoreTable flat(100, 3.0f);
  const EpochPlan plan = plan_with("infobatch", flat);
  CHECK(plan.candidates == 0);
  CHECK(plan.size() == 100);
  CHECK(plan.weight_codes.empty());
}

TEST_CASE("infobatch-quantile keeps each bucket's share with weight 1/keep", "[policies]") {
  const ScoreTable scores = test::ramp_scores(1000);
  const EpochPlan plan = plan_with("infobatch-quantile(percentiles=20:85,keep=0.25:0.5)", scores);
  // Edges at scores 200 and 850: 200 ids keep 25%, 650 keep 50%, 150 always kept.
  CHECK(plan.size() == 50 + 325 + 150);
  std::map<float, int> per_weight;
  for (const auto& [id, weight] : test::weights_by_id(plan)) {
    if (id < 200)
      CHECK(weight == 4.0f);
    else if (id < 850)
      CHECK(weight == 2.0f);
    else
      CHECK(weight == 1.0f);
    ++per_weight[weight];
  }
  CHECK(per_weight[4.0f] == 50);
  CHECK(per_weight[2.0f] == 325);
  CHECK(per_weight[1.0f] == 150);
  CHECK_THROWS_WITH(make_policy("infobatch-quantile(percentiles=20:85,keep=0.5)", 10),
                    Catch::Contains("same, non-zero number"));
  CHECK_THROWS_WITH(make_policy("infobatch-quantile(percentiles=85:20,keep=0.5:0.5)", 10),
                    Catch::Contains("increase strictly"));
}

TEST_CASE("uniform matches infobatch's plan size, or a fixed keep fraction", "[policies]") {
  const ScoreTable scores = test::ramp_scores(1000);
  const EpochPlan matched = plan_with("uniform", scores);
  CHECK(matched.size() == 750);
  CHECK(matched.palette.at(1) == Approx(1000.0 / 750.0));
  // A uniform subset, unlike infobatch, draws from all scores alike.
  std::uint64_t low = 0;
  for (std::uint64_t id : matched.ids) low += id < 500 ? 1 : 0;
  CHECK(low > 300);
  CHECK(low < 450);

  const EpochPlan fixed = plan_with("uniform(keep=0.3)", scores);
  CHECK(fixed.size() == 300);
  CHECK(fixed.palette.at(1) == Approx(1.0 / 0.3));
  CHECK_THROWS_WITH(make_policy("uniform(keep=0.3,r=0.5)", 10),
                    Catch::Contains("one of r, keep and save"));
}

TEST_CASE("ucb keeps the samples with the highest upper bound, unweighted", "[policies]") {
  const ScoreTable scores = test::ramp_scores(1000);
  auto policy = make_policy("ucb(prune=0.3,c=0)", 1000);
  EpochPlan plan;
  plan.num_samples = 1000;
  Rng rng(1);
  policy->plan(scores, rng, plan);
  CHECK(plan.size() == 700);
  CHECK(plan.weight_codes.empty());
  CHECK(*std::min_element(plan.ids.begin(), plan.ids.end()) == 300);

  // A large spread lifts a low-loss sample into the kept set.
  const std::uint64_t id = 5;
  const float swings[] = {0.0f, 400.0f, 0.0f, 400.0f};
  ScoreTable before = test::ramp_scores(1000);
  auto ucb = make_policy("ucb(prune=0.3,c=1,m=0.5)", 1000);
  for (float loss : swings) ucb->observe(before, &id, &loss, 1);
  EpochPlan lifted;
  lifted.num_samples = 1000;
  ucb->plan(scores, rng, lifted);
  CHECK(std::count(lifted.ids.begin(), lifted.ids.end(), 5) == 1);
  CHECK(ucb->state().size() == 1000);
}

TEST_CASE("epsilon-greedy mixes the top scores with random exploration", "[policies]") {
  const ScoreTable scores = test::ramp_scores(1000);
  const EpochPlan greedy = plan_with("epsilon-greedy(prune=0.3,eps=0)", scores);
  CHECK(greedy.size() == 700);
  CHECK(*std::min_element(greedy.ids.begin(), greedy.ids.end()) == 300);

  const EpochPlan mixed = plan_with("epsilon-greedy(prune=0.3,eps=0.5)", scores);
  CHECK(mixed.size() == 700);
  std::uint64_t top = 0;
  for (std::uint64_t id : mixed.ids) top += id >= 650 ? 1 : 0;
  CHECK(top >= 350);  // all 350 greedy picks, plus random ones that land there
  CHECK(std::count_if(mixed.ids.begin(), mixed.ids.end(), [](auto id) { return id < 300; }) > 50);
}

TEST_CASE("policy parameters are checked", "[policies]") {
  CHECK_THROWS_WITH(make_policy("infobatch(r=1)", 10), Catch::Contains("must be in [0, 1)"));
  CHECK_THROWS_WITH(make_policy("infobatch(r=-0.1)", 10), Catch::Contains("must be in [0, 1)"));
  CHECK_THROWS_WITH(make_policy("ucb(prune=1.5)", 10), Catch::Contains("prune"));
  CHECK_THROWS_WITH(make_policy("epsilon-greedy(eps=2)", 10), Catch::Contains("eps"));
  CHECK_THROWS_WITH(make_policy("uniform(keep=0)", 10), Catch::Contains("keep"));
}

TEST_CASE("the plan shuffle makes every order equally likely", "[policies]") {
  // One bucket: all 24 orders of 4 samples, over 24,000 plans. Chi-square
  // with 23 degrees of freedom: 60 is exceeded with probability about 4e-5.
  const ScoreTable four = test::ramp_scores(4);
  std::map<std::vector<std::uint64_t>, int> orders;
  for (std::uint64_t epoch = 0; epoch < 24000; ++epoch)
    ++orders[plan_with("full", four, epoch).ids];
  REQUIRE(orders.size() == 24);
  double chi2 = 0.0;
  for (const auto& [order, count] : orders) chi2 += (count - 1000.0) * (count - 1000.0) / 1000.0;
  CHECK(chi2 < 60.0);

  // Many buckets (70,000 samples): each quarter of the ids lands uniformly
  // over the plan, so its mean position is n/2 within 5 sd (n / sqrt(12 m)).
  const std::uint64_t n = 70000, quarter = n / 4;
  const ScoreTable many = test::ramp_scores(n);
  for (std::uint64_t epoch = 1; epoch <= 3; ++epoch) {
    const EpochPlan plan = plan_with("full", many, epoch);
    REQUIRE(plan.size() == n);
    double sum[4] = {0, 0, 0, 0};
    for (std::uint64_t pos = 0; pos < n; ++pos) sum[plan.ids[pos] / quarter] += pos;
    const double sd = n / std::sqrt(12.0 * quarter);
    for (int q = 0; q < 4; ++q) CHECK(std::abs(sum[q] / quarter - (n - 1) / 2.0) < 5 * sd);
  }
}

TEST_CASE("a plan does not depend on how many threads finish it", "[policies]") {
  // 70,000 samples make several buckets; with the threshold at 0 a second
  // thread finishes some of them (where the machine has two cores).
  const ScoreTable scores = test::ramp_scores(70000);
  std::uint64_t& threshold = detail::parallel_plan_entries();
  const std::uint64_t saved = threshold;
  for (const char* spec : {"full", "infobatch", "infobatch-quantile", "repb"}) {
    threshold = ~std::uint64_t{0};
    const EpochPlan one = plan_with(spec, scores);
    threshold = 0;
    const EpochPlan two = plan_with(spec, scores);
    threshold = saved;
    INFO(spec);
    CHECK(one.size() > 32768);
    CHECK(one.ids == two.ids);
    CHECK(one.weight_codes == two.weight_codes);
  }
}
