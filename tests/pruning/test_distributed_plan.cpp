// Data-parallel sharding of the epoch plan: W ranks build the same plan and
// serve disjoint shards of equal length (the plan wrapped around to W*L).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "test_helpers.h"
#include "winnow/error.h"

using namespace winnow;

namespace {

PrunerOptions options_for(std::uint64_t n, std::uint64_t world, std::uint64_t rank,
                          const std::string& policy = "infobatch") {
  PrunerOptions o;
  o.num_samples = n;
  o.num_epochs = 8;
  o.policy = policy;
  o.seed = 7;
  o.world_size = world;
  o.rank = rank;
  return o;
}

// One epoch on every rank in lockstep: each rank serves its next batch, then
// every rank records the losses of every rank's batch (what
// DistributedPrunedLoss does with its all-gather). Returns the ids per rank.
std::vector<std::vector<std::uint64_t>> lockstep_epoch(std::vector<DynamicPruner>& ranks,
                                                       std::uint64_t batch, std::uint64_t salt) {
  const auto losses = test::synthetic_losses(ranks[0].num_samples(), salt);
  std::vector<std::vector<std::uint64_t>> served(ranks.size());
  for (auto& r : ranks) r.begin_epoch();
  for (;;) {
    std::vector<std::uint64_t> all_ids;
    bool any = false;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      auto b = ranks[r].next_batch(batch);
      if (!b) continue;
      any = true;
      all_ids.insert(all_ids.end(), b->ids, b->ids + b->size);
      served[r].insert(served[r].end(), b->ids, b->ids + b->size);
    }
    if (!any) break;
    std::vector<float> l;
    for (auto id : all_ids) l.push_back(losses[id]);
    for (auto& r : ranks) r.update(all_ids.data(), l.data(), all_ids.size());
  }
  return served;
}

}  // namespace

TEST_CASE("world_size and rank are validated", "[distributed]") {
  CHECK_THROWS_WITH(DynamicPruner(options_for(100, 0, 0)),
                    Catch::Contains("world_size must be at least 1"));
  CHECK_THROWS_WITH(DynamicPruner(options_for(100, 2, 2)),
                    Catch::Contains("rank 2 is out of range for world_size 2"));
  CHECK_NOTHROW(DynamicPruner(options_for(100, 3, 2)));
}

TEST_CASE("ranks serve disjoint, equal shards covering the same plan", "[distributed]") {
  for (const char* policy : {"infobatch", "seta", "repb(window=100)"})
    for (std::uint64_t world : {2, 3}) {
      for (std::uint64_t n : {1000, 1001, 1002}) {
        INFO(policy << ", world " << world << ", n " << n);
        std::vector<DynamicPruner> ranks;
        for (std::uint64_t r = 0; r < world; ++r)
          ranks.emplace_back(options_for(n, world, r, policy));
        for (std::uint64_t epoch = 0; epoch < 8; ++epoch) {
          INFO("epoch " << epoch);
          for (auto& r : ranks) r.begin_epoch();
          const std::uint64_t hash = ranks[0].plan_hash();
          const std::vector<std::uint64_t> plan = ranks[0].plan().ids;
          const std::uint64_t p = plan.size();
          const std::uint64_t l = (p + world - 1) / world;
          for (auto& r : ranks) {
            CHECK(r.plan_hash() == hash);
            CHECK(r.plan().ids == plan);
            CHECK(r.steps_this_epoch(64) == (l + 63) / 64);
          }
          const auto served = lockstep_epoch(ranks, 64, epoch);
          // Equal lengths; concatenated in rank order they are the plan wrapped
          // around to W*L: disjoint except the W*L - P padding entries, which
          // repeat the plan's first entries.
          std::vector<std::uint64_t> all;
          for (const auto& s : served) {
            CHECK(s.size() == l);
            all.insert(all.end(), s.begin(), s.end());
          }
          REQUIRE(all.size() == world * l);
          CHECK(world * l - p < world);
          CHECK(std::equal(plan.begin(), plan.end(), all.begin()));
          for (std::uint64_t k = p; k < all.size(); ++k) CHECK(all[k] == plan[k - p]);
          std::map<std::uint64_t, int> count;
          for (auto id : all) ++count[id];
          CHECK(count.size() == p);  // covers the plan
          std::uint64_t repeated = 0;
          for (const auto& [id, c] : count) repeated += static_cast<std::uint64_t>(c - 1);
          CHECK(repeated == world * l - p);  // only the padding repeats
          // Statistics are global: P planned, W*L served by all ranks together.
          for (auto& r : ranks) {
            CHECK(r.history().back().planned_samples == p);
            CHECK(r.history().back().forward_samples == world * l);
          }
        }
        // Every rank recorded every rank's losses: identical score tables.
        for (auto& r : ranks) {
          CHECK(std::equal(r.scores().data(), r.scores().data() + n, ranks[0].scores().data()));
        }
      }
    }
}

TEST_CASE("a single rank serves the plan itself", "[distributed]") {
  DynamicPruner one(options_for(500, 1, 0));
  DynamicPruner plain(500, 8, "infobatch", 7);
  CHECK(one.plan_hash() == plain.plan_hash());
  CHECK(test::serve_epoch(one, 32) == plain.plan().ids);
  CHECK(one.history().back().forward_samples == 500);
}

TEST_CASE("the scheduler sizes are per rank", "[distributed]") {
  DynamicPruner r0(options_for(1001, 2, 0, "full"));
  // Every epoch of "full" plans 1001 samples: 501 per rank, 16 batches of 32.
  CHECK(r0.steps_this_epoch(32) == 16);
  CHECK(r0.total_planned_steps(32) == 8 * 16);
  test::serve_epoch(r0, 32);
  CHECK(r0.total_planned_steps(32) == 8 * 16);
  CHECK(r0.totals().forward_samples == 1002);
}

TEST_CASE("fixed-step mode: step_budget counts each rank's steps", "[distributed]") {
  std::vector<DynamicPruner> ranks;
  for (std::uint64_t r = 0; r < 2; ++r) {
    PrunerOptions o = options_for(1000, 2, r);
    o.step_budget = 20;
    o.batch_size = 32;
    ranks.emplace_back(o);
  }
  std::vector<std::uint64_t> steps(2, 0);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(ranks[r].total_planned_steps(32) == 20);
    while (ranks[r].next_batch(32)) ++steps[r];
  }
  CHECK(steps[0] == 20);
  CHECK(steps[1] == 20);
}

TEST_CASE("each rank resumes from its own file", "[distributed]") {
  for (std::uint64_t world : {2, 3}) {
    INFO("world " << world);
    test::TempDir dir;
    std::vector<DynamicPruner> ranks, uninterrupted;
    for (std::uint64_t r = 0; r < world; ++r) {
      ranks.emplace_back(options_for(777, world, r));
      uninterrupted.emplace_back(options_for(777, world, r));
    }
    for (int e = 0; e < 3; ++e) {
      lockstep_epoch(ranks, 50, static_cast<std::uint64_t>(e));
      lockstep_epoch(uninterrupted, 50, static_cast<std::uint64_t>(e));
    }
    // Mid-epoch: two batches per rank, then save every rank.
    for (auto* group : {&ranks, &uninterrupted}) {
      for (auto& r : *group) {
        r.begin_epoch();
        r.next_batch(50);
        r.next_batch(50);
      }
    }
    for (std::uint64_t r = 0; r < world; ++r) ranks[r].save(dir.file(std::to_string(r)));
    std::vector<DynamicPruner> resumed;
    for (std::uint64_t r = 0; r < world; ++r) {
      resumed.push_back(DynamicPruner::load_for_rank(dir.file(std::to_string(r)), world, r));
      CHECK(resumed[r].world_size() == world);
      CHECK(resumed[r].rank() == r);
      CHECK(resumed[r].position() == 100);
      CHECK(resumed[r].plan_hash() == uninterrupted[r].plan_hash());
      CHECK(resumed[r].shard() == uninterrupted[r].shard());
    }
    CHECK_THROWS_WITH(DynamicPruner::load_for_rank(dir.file("0"), world, 1),
                      Catch::Contains("saved by rank 0"));
    CHECK_THROWS_WITH(DynamicPruner::load_for_rank(dir.file("0"), world + 1, 0),
                      Catch::Contains("saved by rank 0 of"));
    // Finish this epoch (the two batches served before the save are not
    // replayed), then run on: the same shards as the uninterrupted run.
    for (int e = 3; e < 7; ++e) {
      const auto a = lockstep_epoch(resumed, 50, static_cast<std::uint64_t>(e));
      const auto b = lockstep_epoch(uninterrupted, 50, static_cast<std::uint64_t>(e));
      CHECK(a == b);
    }
    for (std::uint64_t r = 0; r < world; ++r) {
      CHECK(std::equal(resumed[r].scores().data(), resumed[r].scores().data() + 777,
                       uninterrupted[r].scores().data()));
    }
  }
}
