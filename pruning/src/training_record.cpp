#include "winnow/pruning/training_record.h"

#include <cmath>

#include "winnow/error.h"

namespace winnow {

TrainingRecord::TrainingRecord(std::size_t num_samples) : samples_(num_samples) {}

void TrainingRecord::add(std::uint64_t epoch, const std::uint64_t* ids, const float* losses,
                         std::size_t count, const std::int64_t* predicted) {
  for (std::size_t i = 0; i < count; ++i) {  // all checked first: an error records nothing
    WINNOW_THROW_IF_NOT(ids[i] < samples_.size(),
                        "training record: sample id {} is out of range for {} samples", ids[i],
                        samples_.size());
    WINNOW_THROW_IF_NOT(std::isfinite(losses[i]),
                        "training record: sample {} has a loss that is not finite ({})", ids[i],
                        losses[i]);
    WINNOW_THROW_IF_NOT(predicted == nullptr || predicted[i] >= 0,
                        "training record: sample {} has a negative predicted class ({})", ids[i],
                        predicted == nullptr ? 0 : predicted[i]);
  }
  const auto e = static_cast<float>(epoch);
  for (std::size_t i = 0; i < count; ++i) {
    Sums& s = samples_[ids[i]];
    s.loss += losses[i];
    s.epoch_loss += e * losses[i];
    s.epoch += e;
    s.epoch_squared += e * e;
    s.last_loss = losses[i];
    s.last_epoch = static_cast<std::uint32_t>(epoch);
    ++s.seen;
    if (predicted == nullptr) continue;
    if (s.lead == 0) {
      s.candidate = predicted[i];
      s.lead = 1;
    } else {
      s.lead = predicted[i] == s.candidate ? s.lead + 1 : s.lead - 1;
    }
  }
}

SampleTrainingStats TrainingRecord::stats(std::uint64_t id) const {
  WINNOW_THROW_IF_NOT(id < samples_.size(),
                      "training record: sample id {} is out of range for {} samples", id,
                      samples_.size());
  const Sums& s = samples_[id];
  SampleTrainingStats out;
  out.seen = s.seen;
  out.last_loss = s.last_loss;
  out.last_epoch = s.last_epoch;
  out.predicted = s.candidate;
  if (s.seen == 0) return out;
  const double n = s.seen;
  out.mean_loss = s.loss / n;
  const double spread = n * s.epoch_squared - static_cast<double>(s.epoch) * s.epoch;
  if (s.seen > 1 && spread > 0) {
    out.loss_trend = (n * s.epoch_loss - static_cast<double>(s.epoch) * s.loss) / spread;
  }
  return out;
}

}  // namespace winnow
