// End to end on real data: a slice of Fashion-MNIST trained through a torch
// DataLoader with the plan sampler and the loss helper.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "fashion_mnist.h"
#include "models.h"
#include "winnow/torch/indexed_dataset.h"
#include "winnow/torch/plan_sampler.h"
#include "winnow/torch/pruned_loss.h"

using namespace winnow;
namespace ex = winnow::examples;

// InfoBatch's fixed ratio: a 40% budget over 6 epochs skips 60% of each
// pruned epoch (budget_note), which this short run pays for in accuracy.
TEST_CASE("infobatch trains an MLP on a Fashion-MNIST slice with fewer forward samples",
          "[training]") {
  torch::manual_seed(0);
  torch::set_num_threads(1);
  const auto train =
      ex::load_fashion_mnist(ex::default_fashion_mnist_dir(), ex::Split::Train, 6000);
  const auto test = ex::load_fashion_mnist(ex::default_fashion_mnist_dir(), ex::Split::Test, 2000);
  REQUIRE(train.images.size(0) == 6000);
  REQUIRE(train.images.sizes() == torch::IntArrayRef({6000, 1, 28, 28}));

  const std::uint64_t epochs = 6;
  auto pruner = std::make_shared<DynamicPruner>(6000, epochs, "infobatch(r=0.5)", 0);
  auto loader = torch::data::make_data_loader(IndexedTensorDataset(train.images, train.labels),
                                              PlanSampler(pruner),
                                              torch::data::DataLoaderOptions().batch_size(64));
  PrunedLoss pruned_loss(pruner);
  auto model = ex::make_classifier("mlp");
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    for (IndexedBatch& batch : *loader) {
      auto per_sample = torch::nn::functional::cross_entropy(
          model->forward(batch.data), batch.target,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
      auto loss = pruned_loss(per_sample, batch.ids);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
  }
  torch::NoGradGuard no_grad;
  model->eval();
  const double accuracy = model->forward(test.images)
                              .argmax(1)
                              .eq(test.labels)
                              .to(torch::kDouble)
                              .mean()
                              .item<double>();
  const RunStats totals = pruner->totals();
  INFO("accuracy " << accuracy << ", saved " << totals.saved_fraction());
  CHECK(accuracy > 0.78);  // an untrained model scores 0.1
  CHECK(totals.full_forward_samples == 6000 * epochs);
  CHECK(totals.saved_fraction() > 0.10);
  CHECK(pruner->history()[1].kind == PlanKind::Pruned);
  CHECK(pruner->history()[epochs - 1].kind == PlanKind::Annealing);
}

TEST_CASE("flip_labels gives the drawn share of samples another class, the same for a seed",
          "[training]") {
  auto original = ex::load_fashion_mnist(ex::default_fashion_mnist_dir(), ex::Split::Train, 2000);
  auto noisy = original;
  noisy.labels = original.labels.clone();
  const auto flipped = ex::flip_labels(noisy, 0.15, 7);
  REQUIRE(flipped.size() == 300);
  const auto changed = noisy.labels.ne(original.labels);
  CHECK(changed.sum().item<std::int64_t>() == 300);  // every drawn label really changed
  for (const auto id : flipped) CHECK(changed[id].item<bool>());
  CHECK(noisy.labels.min().item<std::int64_t>() >= 0);
  CHECK(noisy.labels.max().item<std::int64_t>() <= 9);

  auto again = original;
  again.labels = original.labels.clone();
  CHECK(ex::flip_labels(again, 0.15, 7) == flipped);
  CHECK(torch::equal(again.labels, noisy.labels));
  auto other = original;
  other.labels = original.labels.clone();
  CHECK(ex::flip_labels(other, 0.15, 8) != flipped);
  CHECK_THROWS_WITH(ex::flip_labels(other, 1.5, 8), Catch::Contains("[0, 1]"));
}
