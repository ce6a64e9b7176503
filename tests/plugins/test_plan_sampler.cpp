// Torch headers first: glog's CHECK must not replace Catch2's.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include "winnow/error.h"
#include "winnow/torch/indexed_dataset.h"
#include "winnow/torch/plan_sampler.h"

using namespace winnow;

namespace {

// Sample i's data is the value i, so a batch shows whether ids match data.
IndexedTensorDataset self_describing(std::int64_t n) {
  auto values = torch::arange(n, torch::kFloat).unsqueeze(1);
  return IndexedTensorDataset(values, torch::arange(n, torch::kLong) % 3);
}

}  // namespace

TEST_CASE("a torch DataLoader serves each planned id once per epoch, with its data", "[sampler]") {
  for (std::size_t workers : {std::size_t{0}, std::size_t{2}}) {
    INFO("workers = " << workers);
    const std::int64_t n = 1000;
    auto pruner = std::make_shared<DynamicPruner>(n, 6, "infobatch", 3);
    auto loader = torch::data::make_data_loader(
        self_describing(n), PlanSampler(pruner),
        torch::data::DataLoaderOptions().batch_size(64).workers(workers));
    for (int epoch = 0; epoch < 4; ++epoch) {
      std::map<std::int64_t, int> seen;
      std::size_t batches = 0;
      std::vector<float> losses;
      for (IndexedBatch& batch : *loader) {
        ++batches;
        REQUIRE(batch.ids.dtype() == torch::kLong);
        // The data of every row belongs to the id travelling with it.
        CHECK(torch::equal(batch.data.squeeze(1).to(torch::kLong), batch.ids));
        for (std::int64_t i = 0; i < batch.ids.size(0); ++i)
          ++seen[batch.ids[i].item<std::int64_t>()];
        // Report synthetic losses so later epochs prune.
        auto ids = batch.ids.contiguous();
        const auto* id_ptr = reinterpret_cast<const std::uint64_t*>(ids.data_ptr<std::int64_t>());
        losses.assign(static_cast<std::size_t>(ids.size(0)), 0.0f);
        for (std::size_t i = 0; i < losses.size(); ++i)
          losses[i] = static_cast<float>(id_ptr[i] % 97);
        pruner->update(id_ptr, losses.data(), losses.size());
      }
      const EpochStats& stats = pruner->history().back();
      CHECK(stats.epoch == static_cast<std::uint64_t>(epoch));
      CHECK(seen.size() == stats.planned_samples);
      CHECK(stats.forward_samples == stats.planned_samples);
      for (const auto& [id, count] : seen) REQUIRE(count == 1);
      CHECK(batches == (stats.planned_samples + 63) / 64);
      if (epoch > 0) CHECK(stats.planned_samples < static_cast<std::uint64_t>(n));
    }
  }
}

TEST_CASE("the sampler rejects a data set of another size", "[sampler]") {
  auto pruner = std::make_shared<DynamicPruner>(10, 2);
  PlanSampler sampler(pruner);
  CHECK_THROWS_WITH(sampler.reset(11), Catch::Contains("differs from the pruner's 10 samples"));
  CHECK_NOTHROW(sampler.reset(10));
  CHECK_THROWS_AS(PlanSampler(nullptr), Error);
  auto dataset = self_describing(5);
  CHECK_THROWS_WITH(dataset.get_batch({1, 5}), Catch::Contains("sample id 5"));
  CHECK_THROWS_WITH(IndexedTensorDataset(torch::zeros({4, 2}), torch::zeros({3})),
                    Catch::Contains("same first dimension"));
}

TEST_CASE("an archived sampler resumes mid-epoch with the same sequence", "[resume]") {
  auto run_to = [](PlanSampler& sampler, int batches, std::vector<std::size_t>& out) {
    for (int b = 0; b < batches; ++b) {
      auto next = sampler.next(32);
      if (!next) {
        sampler.reset();
        next = sampler.next(32);
      }
      std::vector<float> losses;
      for (auto id : *next) losses.push_back(static_cast<float>((id * 7919) % 101));
      std::vector<std::uint64_t> ids(next->begin(), next->end());
      sampler.pruner().update(ids.data(), losses.data(), ids.size());
      out.insert(out.end(), next->begin(), next->end());
    }
  };
  std::vector<std::size_t> reference;
  {
    auto pruner = std::make_shared<DynamicPruner>(500, 8, "infobatch", 9);
    PlanSampler sampler(pruner);
    sampler.reset();
    run_to(sampler, 60, reference);
  }
  std::vector<std::size_t> resumed;
  std::stringstream archive_bytes;
  {
    auto pruner = std::make_shared<DynamicPruner>(500, 8, "infobatch", 9);
    PlanSampler sampler(pruner);
    sampler.reset();
    run_to(sampler, 37, resumed);
    torch::serialize::OutputArchive archive;
    sampler.save(archive);
    archive.save_to(archive_bytes);
  }
  auto fresh = std::make_shared<DynamicPruner>(500, 8, "infobatch", 9);
  PlanSampler sampler(fresh);
  torch::serialize::InputArchive archive;
  archive.load_from(archive_bytes);
  sampler.load(archive);
  run_to(sampler, 23, resumed);
  CHECK(resumed == reference);

  auto other = std::make_shared<DynamicPruner>(400, 8, "infobatch", 9);
  PlanSampler wrong(other);
  torch::serialize::InputArchive again;
  archive_bytes.seekg(0);
  again.load_from(archive_bytes);
  CHECK_THROWS_WITH(wrong.load(again), Catch::Contains("500 samples"));
}
