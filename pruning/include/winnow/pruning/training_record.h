// TrainingRecord: what a training run learned about each sample, from the
// per-sample losses it saw: how often it was seen, its mean loss, the trend
// of its loss over the epochs (least-squares slope, loss per epoch), its
// last loss and, when the caller passes the model's predictions, the class
// the model predicted for it in most epochs. A sample whose given label is
// wrong keeps a high loss that falls late or never, and is predicted as
// another class until the model memorises it: curation takes these back
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
  // The class a streaming majority vote (Boyer-Moore) over the predictions
  // ends with: the class predicted in more than half of them when there is
  // one, else one of the most frequent; -1 when no prediction was passed.
  std::int64_t predicted = -1;
};

class TrainingRecord {
 public:
  explicit TrainingRecord(std::size_t num_samples);

  // Records the losses of `count` samples seen in `epoch`, and the class the
  // model predicted for each when `predicted` is given (argmax of the
  // logits, >= 0); throws winnow::Error for an id out of range, a loss that
  // is not finite or a negative class, recording none of them.
  void add(std::uint64_t epoch, const std::uint64_t* ids, const float* losses, std::size_t count,
           const std::int64_t* predicted = nullptr);

  std::size_t size() const { return samples_.size(); }
  SampleTrainingStats stats(std::uint64_t id) const;

 private:
  struct Sums {
    float loss = 0, epoch_loss = 0, epoch = 0, epoch_squared = 0, last_loss = 0;
    std::uint32_t seen = 0, last_epoch = 0;
    // Boyer-Moore majority vote over the predictions: the candidate and its lead.
    std::int64_t candidate = -1;
    std::uint32_t lead = 0;
  };
  std::vector<Sums> samples_;
};

}  // namespace winnow
