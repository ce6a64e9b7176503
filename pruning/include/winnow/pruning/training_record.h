// TrainingRecord: what a training run learned about each sample, from the
// per-sample losses it saw: how often it was seen, its mean loss, the trend
// of its loss over the epochs (least-squares slope, loss per epoch) and its
// last loss. A sample whose given label is wrong keeps a high loss that falls
// late or never: the label check of a curated dataset takes these back
// (`winnow import-training`, docs/curation.md). Plain C++; one per run, fed
// beside the sampler (the sampler's update() sees the same losses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow {

struct SampleTrainingStats {
  std::uint32_t seen = 0;   // losses recorded
  double mean_loss = 0.0;   // of those losses
  double loss_trend = 0.0;  // slope of loss against epoch; 0 with fewer than two epochs
  double last_loss = 0.0;
  std::uint32_t last_epoch = 0;  // of the last loss (meaningful when seen > 0)
};

class TrainingRecord {
 public:
  explicit TrainingRecord(std::size_t num_samples);

  // Records the losses of `count` samples seen in `epoch`; throws
  // winnow::Error for an id out of range or a loss that is not finite,
  // recording none of them.
  void add(std::uint64_t epoch, const std::uint64_t* ids, const float* losses, std::size_t count);

  std::size_t size() const { return samples_.size(); }
  SampleTrainingStats stats(std::uint64_t id) const;

 private:
  struct Sums {
    float loss = 0, epoch_loss = 0, epoch = 0, epoch_squared = 0, last_loss = 0;
    std::uint32_t seen = 0, last_epoch = 0;
  };
  std::vector<Sums> samples_;
};

}  // namespace winnow
