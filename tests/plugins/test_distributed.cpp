// DistributedPrunedLoss: 2 ranks as 2 threads of this process, over a
// c10d::FileStore in a temporary directory and ProcessGroupGloo on loopback.
// Torch headers first: glog's CHECK must not replace Catch2's.
#include <torch/torch.h>

#include "winnow/torch/distributed_pruned_loss.h"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

using namespace winnow;

namespace {

constexpr int kWorld = 2;

// Blocks each caller until all `count` threads have arrived (C++17 has no
// std::barrier).
class ThreadBarrier {
 public:
  explicit ThreadBarrier(int count) : left_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--left_ == 0) {
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [this] { return left_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  int left_;
};

// Runs body(rank, group) on kWorld threads; rethrows the first failure.
// A rank keeps its group until every rank is done with its own: one that
// closed its sockets early made a peer still connecting (or still in its
// last collective) fail with "Connection closed by peer".
void run_ranks(const std::string& init_file,
               const std::function<void(int, c10::intrusive_ptr<c10d::ProcessGroup>)>& body) {
  std::vector<std::exception_ptr> errors(kWorld);
  std::vector<std::thread> threads;
  ThreadBarrier created(kWorld);
  ThreadBarrier finished(kWorld);
  for (int rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      c10::intrusive_ptr<c10d::ProcessGroup> group;
      try {
        group = make_gloo_group(init_file, kWorld, rank);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
      // Every rank has its group (or has failed) before any rank starts.
      created.arrive_and_wait();
      if (group) {
        try {
          body(rank, group);
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      }
      finished.arrive_and_wait();
      group.reset();
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

PrunerOptions options(std::uint64_t n, int rank) {
  PrunerOptions o;
  o.num_samples = n;
  o.num_epochs = 6;
  o.policy = "infobatch";
  o.seed = 11;
  o.world_size = kWorld;
  o.rank = static_cast<std::uint64_t>(rank);
  return o;
}

}  // namespace

TEST_CASE("ranks share plans and score tables, and train disjoint shards", "[distributed]") {
  constexpr std::uint64_t kSamples = 1001;  // odd: one padding entry per epoch
  constexpr int kEpochs = 5;
  constexpr std::uint64_t kBatch = 32;
  test::TempDir dir;
  struct Epoch {
    std::uint64_t hash = 0;
    std::vector<std::uint64_t> plan, shard, served;
    std::vector<float> scores;
    float first_loss = 0;
  };
  std::vector<std::vector<Epoch>> seen(kWorld, std::vector<Epoch>(kEpochs));
  run_ranks(dir.file("init"), [&](int rank, c10::intrusive_ptr<c10d::ProcessGroup> group) {
    auto pruner = std::make_shared<DynamicPruner>(options(kSamples, rank));
    DistributedPrunedLoss pruned_loss(pruner, group);
    for (int e = 0; e < kEpochs; ++e) {
      Epoch& out = seen[static_cast<std::size_t>(rank)][static_cast<std::size_t>(e)];
      pruner->begin_epoch();
      out.hash = pruner->plan_hash();
      out.plan = pruner->plan().ids;
      out.shard = pruner->shard();
      while (auto batch = pruner->next_batch(kBatch)) {
        std::vector<std::int64_t> ids(batch->ids, batch->ids + batch->size);
        out.served.insert(out.served.end(), batch->ids, batch->ids + batch->size);
        // The ranks report different losses: rank 1 adds 0.5.
        auto id_tensor = torch::tensor(ids, torch::kLong);
        auto losses = (id_tensor.to(torch::kFloat).remainder(97) / 50 + 0.5 * rank + 0.01 * e)
                          .requires_grad_();
        auto loss = pruned_loss(losses, id_tensor);
        loss.backward();
        // The local weighted mean: gradient w_i / B on the local batch only.
        const auto expected = loss.item<float>();
        std::vector<float> w(batch->size);
        pruner->weights(batch->ids, batch->size, w.data());
        double mean = 0;
        for (std::size_t i = 0; i < batch->size; ++i) mean += w[i] * losses[i].item<float>();
        CHECK(expected == Approx(mean / batch->size));
      }
      out.scores.assign(pruner->scores().data(), pruner->scores().data() + kSamples);
    }
  });
  for (int e = 0; e < kEpochs; ++e) {
    INFO("epoch " << e);
    const Epoch& a = seen[0][static_cast<std::size_t>(e)];
    const Epoch& b = seen[1][static_cast<std::size_t>(e)];
    CHECK(a.hash == b.hash);
    CHECK(a.plan == b.plan);
    CHECK(a.served == a.shard);
    CHECK(b.served == b.shard);
    CHECK(a.served.size() == b.served.size());
    // Rank 0 then rank 1 is the plan plus (for an odd plan) one padding entry.
    std::vector<std::uint64_t> both = a.served;
    both.insert(both.end(), b.served.begin(), b.served.end());
    const std::size_t p = a.plan.size();
    REQUIRE(both.size() >= p);
    CHECK(both.size() - p == p % 2);
    CHECK(std::equal(a.plan.begin(), a.plan.end(), both.begin()));
    if (p % 2 == 1) CHECK(both.back() == a.plan.front());
    // Identical score tables, holding each rank's own losses for its samples.
    CHECK(a.scores == b.scores);
    for (std::size_t k = 0; k + (p % 2) < b.served.size(); ++k) {
      const auto id = b.served[k];
      CHECK(a.scores[id] == Approx(static_cast<float>(id % 97) / 50 + 0.5 + 0.01 * e));
    }
  }
}

TEST_CASE("ids above 2^24 are gathered exactly", "[distributed]") {
  // float32 cannot hold 2^24 + 1: ids packed into the loss dtype would merge.
  constexpr std::uint64_t kSamples = (std::uint64_t{1} << 24) + 1000;
  constexpr std::int64_t kBase = std::int64_t{1} << 24;
  test::TempDir dir;
  std::vector<std::vector<float>> scores(kWorld);
  run_ranks(dir.file("init"), [&](int rank, c10::intrusive_ptr<c10d::ProcessGroup> group) {
    PrunerOptions o = options(kSamples, rank);
    o.initial_score = -1.0f;
    auto pruner = std::make_shared<DynamicPruner>(o);
    DistributedPrunedLoss pruned_loss(pruner, group);
    // Rank 0 reports odd ids above 2^24, rank 1 the even ones in between.
    std::vector<std::int64_t> ids;
    std::vector<float> losses;
    for (std::int64_t k = 0; k < 8; ++k) {
      const std::int64_t id = kBase + 1 + 2 * k + rank;
      ids.push_back(id);
      losses.push_back(static_cast<float>(id - kBase));
    }
    pruned_loss(torch::tensor(losses), torch::tensor(ids, torch::kLong));
    auto& out = scores[static_cast<std::size_t>(rank)];
    for (std::int64_t id = kBase - 4; id < kBase + 24; ++id) {
      out.push_back(pruner->scores()[static_cast<std::uint64_t>(id)]);
    }
  });
  CHECK(scores[0] == scores[1]);
  for (std::int64_t id = kBase - 4; id < kBase + 24; ++id) {
    INFO("id 2^24 + " << id - kBase);
    const float expected =
        id >= kBase + 1 && id <= kBase + 16 ? static_cast<float>(id - kBase) : -1.0f;
    CHECK(scores[0][static_cast<std::size_t>(id - (kBase - 4))] == expected);
  }
}

TEST_CASE("unequal batch sizes across ranks fail on every rank", "[distributed]") {
  test::TempDir dir;
  std::vector<std::string> errors(kWorld);
  run_ranks(dir.file("init"), [&](int rank, c10::intrusive_ptr<c10d::ProcessGroup> group) {
    auto pruner = std::make_shared<DynamicPruner>(options(100, rank));
    DistributedPrunedLoss pruned_loss(pruner, group);
    const std::int64_t batch = 4 + rank;
    try {
      pruned_loss(torch::ones({batch}), torch::arange(batch, torch::kLong));
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (const auto& e : errors) CHECK_THAT(e, Catch::Contains("same batch size"));
}

TEST_CASE("the group must match the pruner's rank and world size", "[distributed]") {
  test::TempDir dir;
  std::vector<std::string> errors(kWorld);
  run_ranks(dir.file("init"), [&](int rank, c10::intrusive_ptr<c10d::ProcessGroup> group) {
    auto pruner = std::make_shared<DynamicPruner>(options(100, 1 - rank));
    try {
      DistributedPrunedLoss pruned_loss(pruner, group);
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (const auto& e : errors) CHECK_THAT(e, Catch::Contains("but the pruner was set up as rank"));
}
