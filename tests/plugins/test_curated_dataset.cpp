// winnow::CuratedDataset: a store the `winnow` CLI curated, read by LibTorch's
// data loader as image tensors with their class indices and sample ids.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include <torch/torch.h>

#include "support/temp_dir.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/torch/curated_dataset.h"
#include "winnow/torch/indexed_dataset.h"
#include "winnow/torch/plan_sampler.h"

namespace {

const std::string kImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
const std::string kLabels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

}  // namespace

TEST_CASE("CuratedDataset gives a curated store's images to a torch data loader", "[curated]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("d.db");
  const std::string cli = WINNOW_CLI_PATH;
  const std::string log = " > " + dir.file("out.txt") + " 2>&1";
  REQUIRE(std::system((cli + " init --db " + db + log).c_str()) == 0);
  REQUIRE(
      std::system((cli + " import-idx --db " + db + " --limit 60 " + kImages + " " + kLabels + log)
                      .c_str()) == 0);

  winnow::CuratedDataset dataset(db);
  const std::size_t n = dataset.size().value();
  REQUIRE(n > 50);
  const auto records = winnow::curation::readers::import_idx(kImages, kLabels, "t");
  const auto example = dataset.get(0);
  CHECK(example.data.sizes() == torch::IntArrayRef({1, 28, 28}));
  CHECK(example.data.max().item<float>() <= 1.0f);
  // Sample 0 is the set's first image (the first one is never a duplicate).
  REQUIRE(dataset.samples().at(0).key == "train-000000");
  const auto& stored = records.at(0).pixels;
  CHECK(static_cast<int>(std::lround(example.data[0][3][14].item<float>() * 255)) ==
        static_cast<int>(stored.at(3 * 28 + 14)));
  CHECK(dataset.samples().class_names().at(
            static_cast<std::size_t>(example.target.item<std::int64_t>())) == *records.at(0).label);

  // Through the sampler and a loader with two worker threads: every sample once.
  auto pruner = std::make_shared<winnow::DynamicPruner>(n, 1, "full", 0);
  auto loader = torch::data::make_data_loader(
      winnow::IndexedDataset<winnow::CuratedDataset>(dataset), winnow::PlanSampler(pruner),
      torch::data::DataLoaderOptions().batch_size(16).workers(2));
  std::set<std::int64_t> seen;
  for (winnow::IndexedBatch& batch : *loader) {
    CHECK(batch.data.size(1) == 1);
    for (std::int64_t i = 0; i < batch.ids.size(0); ++i)
      seen.insert(batch.ids[i].item<std::int64_t>());
  }
  CHECK(seen.size() == n);

  winnow::CuratedDataset colour(db, {}, {16, 8, true});
  CHECK(colour.get(1).data.sizes() == torch::IntArrayRef({3, 8, 16}));

  // A person's verdict reaches a noise-aware pruner as a trusted label.
  const std::string verdicts = dir.file("v.csv");
  REQUIRE(std::system(
              ("printf 'item,verdict,label\\ntrain-000001,relabel,3\\n' > " + verdicts).c_str()) ==
          0);
  REQUIRE(std::system((cli + " review --db " + db + " " + verdicts + log).c_str()) == 0);
  winnow::curation::CuratedSampleOptions both;
  both.statuses = {winnow::store::SampleStatus::accepted, winnow::store::SampleStatus::label_issue};
  winnow::CuratedDataset reviewed(db, both);
  std::size_t by_person = 0;
  for (std::size_t i = 0; i < reviewed.samples().size(); ++i) {
    if (reviewed.samples().at(i).reviewed) {
      ++by_person;
      CHECK(reviewed.samples().at(i).key == "train-000001");
    }
  }
  CHECK(by_person == 1);
  winnow::DynamicPruner noise_aware(reviewed.size().value(), 4, "infobatch(noisy=3)", 0);
  CHECK_NOTHROW(winnow::take_curation_verdicts(noise_aware, reviewed));
  winnow::DynamicPruner plain(reviewed.size().value(), 4, "infobatch", 0);
  CHECK_THROWS_WITH(winnow::take_curation_verdicts(plain, reviewed), Catch::Contains("noisy=P"));
}
