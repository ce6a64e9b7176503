// CuratedDataset: the samples of a curated store as a torch::data dataset,
// the LibTorch side of winnow.CuratedDataset (curation/dataset/
// curated_samples.h): the samples of one status as they are now or were at a
// revision, each an Example of a float image tensor [C, H, W] in [0, 1] (1
// channel, or 3 with PixelShape::colour) and its class index (int64; -1 for
// an unlabelled sample). Wrap it in winnow::IndexedDataset so that batches
// carry the ids the sampler needs; samples().at(i).id is sample i's store id.
// take_curation_verdicts hands a noise-aware pruner the dataset's label issues
// and the labels a person confirmed. Header-only: link winnow::torch and
// winnow::curation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/data/datasets/base.h>
#include <torch/data/example.h>
#include <torch/types.h>

#include "winnow/curation/dataset/curated_samples.h"
#include "winnow/error.h"
#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

class CuratedDataset : public torch::data::datasets::Dataset<CuratedDataset> {
 public:
  explicit CuratedDataset(const std::string& db, const curation::CuratedSampleOptions& options = {},
                          const curation::PixelShape& shape = {})
      : samples_(std::make_shared<curation::CuratedSamples>(db, options)), shape_(shape) {}

  // Sample `index`; throws winnow::Error for a text sample (no image to give)
  // and as CuratedSamples::content does (a file gone, say).
  torch::data::Example<> get(std::size_t index) override {
    const curation::TrainingContent content = samples_->content(index, shape_);
    WINNOW_THROW_IF_NOT(!content.is_text,
                        "{}: sample '{}' is a text; CuratedDataset gives image tensors",
                        samples_->path(), samples_->at(index).key);
    const auto height = static_cast<std::int64_t>(content.height);
    const auto width = static_cast<std::int64_t>(content.width);
    const auto channels = static_cast<std::int64_t>(content.channels);
    at::Tensor pixels = torch::from_blob(const_cast<std::uint8_t*>(content.pixels.data()),
                                         {height, width, channels}, torch::kUInt8)
                            .permute({2, 0, 1})
                            .to(torch::kFloat32)
                            .div_(255.0);
    return {pixels.contiguous(),
            torch::tensor(static_cast<std::int64_t>(samples_->at(index).class_index))};
  }

  torch::optional<std::size_t> size() const override { return samples_->size(); }
  const curation::CuratedSamples& samples() const { return *samples_; }

 private:
  std::shared_ptr<curation::CuratedSamples> samples_;  // shared by the loader's copies
  curation::PixelShape shape_;
};

// Curation into training: the items of `data` whose status is label_issue
// are flagged on `pruner` (down-weighted) and those a person's verdict
// decided are trusted (never down-weighted), as winnow.CuratedDataset.sampler
// does. `pruner` runs over `data`'s items (ids 0..size-1) with a noise-aware
// spec ("infobatch(noisy=3)"); throws winnow::Error when it is not and there
// is something to hand over.
inline void take_curation_verdicts(DynamicPruner& pruner, const CuratedDataset& data) {
  const curation::CuratedSamples& samples = data.samples();
  std::vector<std::uint64_t> flagged, trusted;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples.at(i).reviewed) trusted.push_back(i);
    if (samples.at(i).status == store::SampleStatus::label_issue) flagged.push_back(i);
  }
  if (!trusted.empty()) pruner.trust_labels(trusted.data(), trusted.size());
  if (!flagged.empty()) pruner.flag_label_issues(flagged.data(), flagged.size());
}

}  // namespace winnow
