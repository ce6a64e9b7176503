// The noise-aware option: persistently high-loss samples and caller-flagged
// label issues are down-weighted instead of always kept (docs/pruning.md).
#include <catch2/catch.hpp>

#include "support/temp_dir.h"
#include "test_helpers.h"

using namespace winnow;

namespace {

// Ids below 10 behave like wrong labels (loss stays at 8), ids 10..19 are
// hard only for the first `hard_epochs` epochs, the rest are easy.
float loss_of(std::uint64_t id, std::uint64_t epoch, std::uint64_t hard_epochs) {
  if (id < 10) return 8.0f;
  if (id < 20) return epoch < hard_epochs ? 8.0f : 0.2f;
  return 0.1f + 0.01f * static_cast<float>(id % 50);
}

void train(DynamicPruner& pruner, std::uint64_t epoch, std::uint64_t hard_epochs) {
  pruner.begin_epoch();
  while (auto b = pruner.next_batch(32)) {
    std::vector<float> l;
    for (std::size_t i = 0; i < b->size; ++i) l.push_back(loss_of(b->ids[i], epoch, hard_epochs));
    pruner.update(b->ids, l.data(), b->size);
  }
}

}  // namespace

TEST_CASE("samples whose loss stays high are down-weighted, hard ones recover", "[noise]") {
  DynamicPruner pruner(400, 20, "infobatch(noisy=3,noisy_weight=0.25)", 5);
  CHECK(pruner.policy_spec() ==
        "infobatch(delta=0.875,noisy=3,noisy_factor=3,noisy_weight=0.25,save=0.4)");
  for (std::uint64_t e = 0; e < 3; ++e) train(pruner, e, 4);
  // Two pruned plans so far: streaks of 2 < 3, nobody is a suspect yet.
  for (std::uint64_t id = 0; id < 20; ++id) CHECK(pruner.weight(id) == 1.0f);
  train(pruner, 3, 4);
  pruner.begin_epoch();  // the fourth plan: streak 3 for ids 0..19
  for (std::uint64_t id = 0; id < 20; ++id) CHECK(pruner.weight(id) == 0.25f);
  CHECK(pruner.weight(300) >= 1.0f);  // a clean sample keeps its infobatch weight
  while (auto b = pruner.next_batch(32)) {
    std::vector<float> l;
    for (std::size_t i = 0; i < b->size; ++i) l.push_back(loss_of(b->ids[i], 4, 4));
    pruner.update(b->ids, l.data(), b->size);
  }
  pruner.begin_epoch();
  // Ids 10..19 were learned in epoch 4: their streak ended. 0..9 stay suspects.
  for (std::uint64_t id = 0; id < 10; ++id) CHECK(pruner.weight(id) == 0.25f);
  for (std::uint64_t id = 10; id < 20; ++id) CHECK(pruner.weight(id) >= 1.0f);  // not suspects
}

TEST_CASE("caller-flagged label issues are down-weighted from the next plan", "[noise]") {
  DynamicPruner pruner(400, 20, "uniform(keep=1,noisy=5,noisy_weight=0.5)", 2);
  train(pruner, 0, 0);
  const std::vector<std::uint64_t> flagged{7, 123, 399};
  pruner.flag_label_issues(flagged.data(), flagged.size());
  train(pruner, 1, 0);
  pruner.begin_epoch();
  for (std::uint64_t id : flagged) CHECK(pruner.weight(id) == 0.5f);
  CHECK(pruner.weight(8) == 1.0f);

  const std::uint64_t out_of_range = 400;
  CHECK_THROWS_WITH(pruner.flag_label_issues(&out_of_range, 1), Catch::Contains("out of range"));
  DynamicPruner plain(400, 20, "infobatch", 2);
  CHECK_THROWS_WITH(plain.flag_label_issues(flagged.data(), 1), Catch::Contains("noisy=P"));
  CHECK_THROWS_WITH(DynamicPruner(10, 5, "infobatch(noisy=0)"), Catch::Contains("noisy"));
  CHECK_THROWS_WITH(DynamicPruner(10, 5, "infobatch(noisy=2,noisy_weight=1)"),
                    Catch::Contains("noisy_weight"));
}

TEST_CASE("trusted labels are never down-weighted, by loss or by flag", "[noise]") {
  DynamicPruner pruner(400, 20, "infobatch(noisy=2,noisy_weight=0.25)", 3);
  // Ids 0..9 keep a high loss; a person confirmed 0..4, and 5 was also flagged.
  const std::vector<std::uint64_t> trusted{0, 1, 2, 3, 4};
  pruner.trust_labels(trusted.data(), trusted.size());
  const std::uint64_t flagged[] = {4, 5, 30};
  pruner.flag_label_issues(flagged, 3);  // 4 is trusted: its flag is ignored
  for (std::uint64_t e = 0; e < 5; ++e) train(pruner, e, 0);
  pruner.begin_epoch();
  for (std::uint64_t id : trusted) CHECK(pruner.weight(id) >= 1.0f);
  for (std::uint64_t id = 5; id < 10; ++id) CHECK(pruner.weight(id) == 0.25f);  // by their loss
  CHECK(pruner.weight(30) < 1.0f);  // flagged and not trusted

  const std::uint64_t out_of_range = 400;
  CHECK_THROWS_WITH(pruner.trust_labels(&out_of_range, 1), Catch::Contains("out of range"));
  DynamicPruner plain(400, 20, "infobatch", 2);
  CHECK_THROWS_WITH(plain.trust_labels(trusted.data(), 1), Catch::Contains("noisy=P"));
}

TEST_CASE("the noise-aware state is saved with the run", "[noise]") {
  test::TempDir dir;
  const std::string path = dir.file("noisy.wnpr");
  DynamicPruner pruner(400, 20, "repb(noisy=2)", 9);
  for (std::uint64_t e = 0; e < 3; ++e) train(pruner, e, 0);
  const std::uint64_t flagged = 300;
  pruner.flag_label_issues(&flagged, 1);
  pruner.save(path);
  DynamicPruner restored = DynamicPruner::load(path);
  CHECK(restored.policy_spec() == pruner.policy_spec());
  train(pruner, 3, 0);
  train(restored, 3, 0);
  pruner.begin_epoch();
  restored.begin_epoch();
  CHECK(restored.plan().ids == pruner.plan().ids);
  CHECK(restored.weight(300) == pruner.weight(300));
  CHECK(restored.weight(0) == pruner.weight(0));
  CHECK(restored.weight(0) < 1.0f);  // a wrong label found by its loss
}
