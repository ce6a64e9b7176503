// Torch headers first: glog's CHECK must not replace Catch2's.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

#include "fused_loss_step.h"  // internal: the fused device step
#include "winnow/pruning/pruner_io.h"
#include "winnow/torch/pruned_loss.h"

using namespace winnow;

namespace {

// A pruner in a pruned epoch with uniform(keep=0.5): planned samples weigh 2.
std::shared_ptr<DynamicPruner> pruner_with_weights(std::uint64_t n) {
  auto pruner = std::make_shared<DynamicPruner>(n, 10, "uniform(keep=0.5)", 4);
  pruner->begin_epoch();
  return pruner;
}

torch::Tensor planned_ids(DynamicPruner& pruner, std::int64_t count) {
  const auto& ids = pruner.plan().ids;
  return torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.begin() + count), torch::kLong);
}

}  // namespace

TEST_CASE("the loss helper returns the weighted mean and records raw scores", "[loss]") {
  for (auto mode : {PrunedLoss::Mode::HostTable, PrunedLoss::Mode::DeviceTables}) {
    INFO("device tables: " << (mode == PrunedLoss::Mode::DeviceTables));
    auto pruner = pruner_with_weights(100);
    PrunedLoss pruned_loss(pruner, torch::kCPU, mode);
    const auto ids = planned_ids(*pruner, 4);
    const auto losses = torch::tensor({0.5f, 1.0f, 2.0f, 4.0f}).requires_grad_();
    const auto before = losses.detach().clone();

    const auto loss = pruned_loss(losses, ids);
    CHECK(loss.dim() == 0);
    CHECK(loss.item<float>() == Approx(2.0 * (0.5 + 1.0 + 2.0 + 4.0) / 4));
    loss.backward();
    // d loss / d l_i = w_i / B = 2 / 4: gradient flows, the caller's tensor is untouched.
    CHECK(torch::allclose(losses.grad(), torch::full({4}, 0.5f)));
    CHECK(torch::equal(losses.detach(), before));

    pruner->sync_scores();
    for (std::int64_t i = 0; i < 4; ++i) {
      CHECK(pruner->scores()[static_cast<std::uint64_t>(ids[i].item<std::int64_t>())] ==
            before[i].item<float>());
    }
  }
}

TEST_CASE("device tables refresh weights with each plan and sync scores once per epoch", "[loss]") {
  auto pruner = std::make_shared<DynamicPruner>(200, 10, "infobatch(r=0.5)", 5);
  PrunedLoss pruned_loss(pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables);
  for (int epoch = 0; epoch < 3; ++epoch) {
    pruner->begin_epoch();
    while (auto batch = pruner->next_batch(50)) {
      std::vector<std::int64_t> ids(batch->ids, batch->ids + batch->size);
      auto id_tensor = torch::tensor(ids, torch::kLong);
      auto losses = (id_tensor.to(torch::kFloat) / 200.0f);  // low ids: low loss
      auto loss = pruned_loss(losses, id_tensor);
      // The weighted mean uses this epoch's weights.
      float expected = 0.0f;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        expected += pruner->weight(static_cast<std::uint64_t>(ids[i])) *
                    static_cast<float>(ids[i]) / 200.0f;
      }
      CHECK(loss.item<float>() == Approx(expected / static_cast<float>(ids.size())).epsilon(1e-5));
    }
  }
  // Epoch 1 was planned from the scores of epoch 0, which only the device held:
  // the below-mean (low-id) half must have been pruned.
  CHECK(pruner->history()[1].kind == PlanKind::Pruned);
  CHECK(pruner->history()[1].candidates == 100);
  // All 100 others plus each candidate with probability 0.5 (5 sd: +-25).
  CHECK(pruner->history()[1].forward_samples >= 125);
  CHECK(pruner->history()[1].forward_samples <= 175);
}

TEST_CASE("device tables report invalid ids and losses at the next plan", "[loss]") {
  auto pruner = std::make_shared<DynamicPruner>(10, 5, "infobatch", 1);
  PrunedLoss pruned_loss(pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables);
  pruner->begin_epoch();
  pruned_loss(torch::tensor({1.0f, 2.0f}), torch::tensor({1, 2}, torch::kLong));
  // One device-side helper per pruner: a second would split the scores.
  CHECK_THROWS_WITH(PrunedLoss(pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables),
                    Catch::Contains("one loss helper per pruner"));
  while (pruner->next_batch(10)) {
  }
  auto nan = std::numeric_limits<float>::quiet_NaN();
  auto loss = pruned_loss(torch::tensor({3.0f, nan}), torch::tensor({3, 4}, torch::kLong));
  CHECK(std::isnan(loss.item<float>()));
  CHECK_THROWS_WITH(pruner->begin_epoch(),
                    Catch::Contains("1 observations") && Catch::Contains("non-finite"));
  // The valid score got through, the NaN did not.
  CHECK(pruner->scores()[3] == 3.0f);
  CHECK(pruner->scores()[4] == pruner->scores().initial_score());
}

TEST_CASE("bad input to the loss helper gets a clear error and changes nothing", "[loss]") {
  auto pruner = pruner_with_weights(50);
  PrunedLoss pruned_loss(pruner);
  const auto ids = planned_ids(*pruner, 3);
  const std::vector<float> before(pruner->scores().data(), pruner->scores().data() + 50);

  CHECK_THROWS_WITH(pruned_loss(torch::tensor(1.5f), ids), Catch::Contains("already reduced"));
  CHECK_THROWS_WITH(pruned_loss(torch::ones({3, 1}), ids), Catch::Contains("shape [B]"));
  CHECK_THROWS_WITH(pruned_loss(torch::ones({2}), ids), Catch::Contains("2 losses but 3 ids"));
  CHECK_THROWS_WITH(pruned_loss(torch::ones({3}), ids.to(torch::kFloat)),
                    Catch::Contains("integer"));
  CHECK_THROWS_WITH(pruned_loss(torch::ones({3}), torch::tensor({1, 2, 50}, torch::kLong)),
                    Catch::Contains("sample id 50"));
  CHECK_THROWS_WITH(pruned_loss(torch::ones({3}), torch::tensor({1, -2, 3}, torch::kLong)),
                    Catch::Contains("out of range"));
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(pruned_loss(torch::tensor({1.0f, inf, 1.0f}), ids), Catch::Contains("finite"));
  CHECK(std::vector<float>(pruner->scores().data(), pruner->scores().data() + 50) == before);
}

TEST_CASE("negative losses are refused on both paths unless the pruner allows them", "[loss]") {
  auto host_pruner = pruner_with_weights(50);
  PrunedLoss host(host_pruner);
  const auto ids = planned_ids(*host_pruner, 3);
  CHECK_THROWS_WITH(host(torch::tensor({1.0f, -1e30f, 1.0f}), ids),
                    Catch::Contains("must not be negative"));
  CHECK(host_pruner->scores().mean() == Approx(1.0));

  auto device_pruner = std::make_shared<DynamicPruner>(10, 5, "infobatch", 1);
  PrunedLoss device(device_pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables);
  device_pruner->begin_epoch();
  while (device_pruner->next_batch(10)) {
  }
  device(torch::tensor({3.0f, -1e30f}), torch::tensor({3, 4}, torch::kLong));
  CHECK_THROWS_WITH(device_pruner->begin_epoch(),
                    Catch::Contains("1 observations") && Catch::Contains("negative"));
  CHECK(device_pruner->scores()[3] == 3.0f);
  CHECK(device_pruner->scores()[4] == device_pruner->scores().initial_score());

  PrunerOptions o;
  o.num_samples = 10;
  o.num_epochs = 5;
  o.allow_negative_losses = true;
  auto signed_pruner = std::make_shared<DynamicPruner>(o);
  PrunedLoss signed_device(signed_pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables);
  signed_pruner->begin_epoch();
  while (signed_pruner->next_batch(10)) {
  }
  signed_device(torch::tensor({-0.5f, -2.0f}), torch::tensor({3, 4}, torch::kLong));
  signed_pruner->begin_epoch();
  CHECK(signed_pruner->scores()[4] == -2.0f);
}

TEST_CASE("half-precision losses keep fp32 scores", "[loss]") {
  auto pruner = pruner_with_weights(20);
  PrunedLoss pruned_loss(pruner);
  const auto ids = planned_ids(*pruner, 2);
  const auto losses = torch::tensor({0.25f, 3.0f}).to(torch::kHalf);
  const auto loss = pruned_loss(losses, ids);
  CHECK(loss.scalar_type() == torch::kHalf);
  CHECK(loss.item<float>() == Approx(2.0 * (0.25 + 3.0) / 2));
  CHECK(pruner->scores()[static_cast<std::uint64_t>(ids[1].item<std::int64_t>())] == 3.0f);
}

namespace {

// A loss for sample `id` in `epoch` that every run reproduces: spread over
// [0, 1) with a tenth of the samples stuck high (as mislabelled ones are).
float planted_loss(std::uint64_t id, std::uint64_t epoch) {
  const float base = static_cast<float>((id * 7919 + epoch * 31) % 97) / 97.0f;
  return id % 10 == 0 ? 3.0f + base : base;
}

// Trains `epochs` epochs of fake losses through a PrunedLoss in `mode` on
// `device`; returns every epoch's plan (ids, then weights) and the final scores.
std::vector<std::vector<float>> run_policy(const std::string& policy, PrunedLoss::Mode mode,
                                           torch::Device device) {
  const std::uint64_t n = 300, epochs = 6;
  auto pruner = std::make_shared<DynamicPruner>(n, epochs, policy, 11);
  PrunedLoss pruned_loss(pruner, device, mode);
  std::vector<std::vector<float>> trace;
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    pruner->begin_epoch();
    std::vector<float> plan;
    while (auto batch = pruner->next_batch(32)) {
      std::vector<std::int64_t> ids(batch->ids, batch->ids + batch->size);
      std::vector<float> losses;
      for (auto id : ids) {
        plan.push_back(static_cast<float>(id));
        plan.push_back(pruner->weight(static_cast<std::uint64_t>(id)));
        losses.push_back(planted_loss(static_cast<std::uint64_t>(id), epoch));
      }
      pruned_loss(torch::tensor(losses).to(device), torch::tensor(ids, torch::kLong).to(device));
    }
    trace.push_back(plan);
  }
  pruner->sync_scores();
  trace.emplace_back(pruner->scores().data(), pruner->scores().data() + n);
  return trace;
}

}  // namespace

TEST_CASE("device tables give every policy exactly the host path's plans and scores", "[loss]") {
  std::vector<torch::Device> devices{torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  // The policies whose observe() hook or score EMA the device path once skipped.
  for (const std::string policy : {"infobatch", "seta", "repb", "ucb", "infobatch(noisy=2)",
                                   "seta(noisy=2)", "epsilon-greedy"}) {
    const auto host = run_policy(policy, PrunedLoss::Mode::HostTable, torch::kCPU);
    for (const auto& device : devices) {
      INFO(policy << " on " << device);
      CHECK(run_policy(policy, PrunedLoss::Mode::DeviceTables, device) == host);
    }
  }
}

TEST_CASE("the fused step records what the host path records, observation by observation",
          "[loss]") {
  // The same per-observation code runs as the CUDA kernel; here its host loop
  // is checked against the pruning core's own update() and weight lookup.
  const std::int64_t n = 500;
  for (const float momentum : {0.0f, 0.7f}) {
    for (const bool allow_negative : {false, true}) {
      INFO("momentum " << momentum << ", negatives allowed: " << allow_negative);
      Rng rng(static_cast<std::uint64_t>(momentum * 10) + (allow_negative ? 1 : 0));
      ScoreTable reference(n, 1.0f, momentum, allow_negative);
      std::vector<float> weights(n);
      for (auto& w : weights) w = rng.uniform() < 0.5 ? 1.0f : 2.0f;
      std::vector<std::int64_t> ids;
      std::vector<float> losses;
      for (std::int64_t id = 0; id < n; id += 2) {  // distinct ids, as a plan gives them
        ids.push_back(id);
        losses.push_back(static_cast<float>(rng.uniform() * 4.0));
      }
      ids[3] = n + 3;                                        // out of range
      ids[7] = -1;                                           // out of range
      losses[11] = std::numeric_limits<float>::quiet_NaN();  // not finite
      losses[12] = std::numeric_limits<float>::infinity();   // not finite
      losses[13] = -0.5f;                                    // negative
      losses[14] = -0.0f;                                    // zero

      std::vector<float> scores(reference.data(), reference.data() + n);
      const auto count = static_cast<std::int64_t>(ids.size());
      std::vector<float> weighted(ids.size()), gathered(ids.size());
      unsigned long long invalid = 0;
      winnow::detail::FusedLossStep step{
          losses.data(), ids.data(),     count,           weights.data(),  scores.data(), n,
          momentum,      allow_negative, weighted.data(), gathered.data(), &invalid};
      winnow::detail::run_fused_loss_step_on_host(step);

      std::vector<std::uint64_t> valid_ids;
      std::vector<float> valid_losses;
      unsigned long long expected_invalid = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const bool in_range = ids[i] >= 0 && ids[i] < n;
        const auto id = static_cast<std::uint64_t>(ids[i]);
        CHECK(gathered[i] == (in_range ? weights[id] : 0.0f));
        if (in_range && std::isfinite(losses[i])) CHECK(weighted[i] == losses[i] * weights[id]);
        if (!in_range) CHECK(weighted[i] == 0.0f);
        if (valid_observation(id, losses[i], n, allow_negative)) {
          valid_ids.push_back(id);
          valid_losses.push_back(losses[i]);
        } else {
          ++expected_invalid;
        }
      }
      reference.update(valid_ids.data(), valid_losses.data(), valid_ids.size());
      CHECK(invalid == expected_invalid);
      CHECK(expected_invalid == (allow_negative ? 4u : 5u));
      CHECK(scores == std::vector<float>(reference.data(), reference.data() + n));
    }
  }
}

TEST_CASE("device tables drop what they recorded before the pruner was restored", "[loss]") {
  // A run restored from a checkpoint in the middle of an epoch: what the
  // device recorded for the replaced run must not overwrite the restored scores.
  for (const std::string policy : {"infobatch", "repb"}) {  // the fused step, the log
    INFO(policy);
    auto pruner = std::make_shared<DynamicPruner>(40, 5, policy, 3);
    PrunedLoss pruned_loss(pruner, torch::kCPU, PrunedLoss::Mode::DeviceTables);
    pruner->begin_epoch();
    std::stringstream saved;
    write_pruner(*pruner, saved);
    const std::vector<float> restored_scores(pruner->scores().data(), pruner->scores().data() + 40);
    auto batch = pruner->next_batch(8);
    REQUIRE(batch);
    std::vector<std::int64_t> ids(batch->ids, batch->ids + batch->size);
    pruned_loss(torch::full({static_cast<std::int64_t>(ids.size())}, 7.0f),
                torch::tensor(ids, torch::kLong));
    pruner->restore(read_pruner(saved, "test"));
    pruner->sync_scores();
    CHECK(std::vector<float>(pruner->scores().data(), pruner->scores().data() + 40) ==
          restored_scores);
    // Steps after the restore are recorded as usual.
    pruned_loss(torch::full({1}, 5.0f), torch::tensor({ids[0]}, torch::kLong));
    pruner->sync_scores();
    CHECK(pruner->scores()[static_cast<std::uint64_t>(ids[0])] == 5.0f);

    // Restored again, and a step comes before the next sync: only that step counts.
    pruned_loss(torch::full({static_cast<std::int64_t>(ids.size())}, 9.0f),
                torch::tensor(ids, torch::kLong));
    saved.clear();
    saved.seekg(0);
    pruner->restore(read_pruner(saved, "test"));
    pruned_loss(torch::full({1}, 4.0f), torch::tensor({ids[1]}, torch::kLong));
    pruner->sync_scores();
    std::vector<float> expected = restored_scores;
    expected[static_cast<std::size_t>(ids[1])] = 4.0f;
    CHECK(std::vector<float>(pruner->scores().data(), pruner->scores().data() + 40) == expected);
  }
}
