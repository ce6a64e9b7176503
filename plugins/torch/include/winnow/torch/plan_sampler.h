// PlanSampler: a torch::data sampler that serves a DynamicPruner's epoch plans.
//
//   auto pruner = std::make_shared<winnow::DynamicPruner>(N, epochs, "infobatch");
//   auto loader = torch::data::make_data_loader(
//       winnow::IndexedTensorDataset(images, labels), winnow::PlanSampler(pruner),
//       torch::data::DataLoaderOptions().batch_size(128));
//
// reset() (called by the loader at the start of every pass) begins the next
// epoch, whose plan is built before its first batch; next() serves the plan.
// The pruner is shared, so the loss helper and the training loop see the same
// scores, plan and statistics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/data/samplers/base.h>

#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

class PlanSampler : public torch::data::samplers::Sampler<std::vector<std::size_t>> {
 public:
  explicit PlanSampler(std::shared_ptr<DynamicPruner> pruner);

  // Begins an epoch (see DynamicPruner::begin_epoch). A new_size other than
  // the pruner's sample count is an error: the plan covers a fixed data set.
  void reset(torch::optional<std::size_t> new_size = torch::nullopt) override;
  torch::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;

  // Stores / restores the whole pruner state (scores, plan, position, stats)
  // as one byte tensor named "winnow_pruner"; load checks the sample count.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

  DynamicPruner& pruner() const { return *pruner_; }
  // Wall time spent inside reset() and next(), shared by copies of the sampler.
  double seconds_spent() const;

 private:
  std::shared_ptr<DynamicPruner> pruner_;
  std::shared_ptr<std::atomic<std::int64_t>> nanoseconds_;
};

}  // namespace winnow
