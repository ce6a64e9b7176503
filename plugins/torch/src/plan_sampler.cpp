#include "winnow/torch/plan_sampler.h"

#include <chrono>
#include <cstring>
#include <sstream>

#include <torch/serialize/archive.h>

#include "winnow/error.h"
#include "winnow/pruning/pruner_io.h"

namespace winnow {
namespace {

// Adds the wall time of one scope to a shared counter.
class ScopedTimer {
 public:
  explicit ScopedTimer(std::atomic<std::int64_t>& total)
      : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    total_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
  }

 private:
  std::atomic<std::int64_t>& total_;
  std::chrono::steady_clock::time_point start_;
};

constexpr const char* kArchiveKey = "winnow_pruner";

}  // namespace

PlanSampler::PlanSampler(std::shared_ptr<DynamicPruner> pruner)
    : pruner_(std::move(pruner)), nanoseconds_(std::make_shared<std::atomic<std::int64_t>>(0)) {
  WINNOW_THROW_IF_NOT(pruner_ != nullptr, "PlanSampler: the pruner is null");
}

void PlanSampler::reset(torch::optional<std::size_t> new_size) {
  ScopedTimer timer(*nanoseconds_);
  WINNOW_THROW_IF_NOT(!new_size || *new_size == pruner_->num_samples(),
                      "PlanSampler::reset: new size {} differs from the pruner's {} samples; "
                      "make a new pruner for a different data set",
                      new_size.value_or(0), pruner_->num_samples());
  pruner_->begin_epoch();
}

torch::optional<std::vector<std::size_t>> PlanSampler::next(std::size_t batch_size) {
  ScopedTimer timer(*nanoseconds_);
  const auto batch = pruner_->next_batch(batch_size);
  if (!batch) return torch::nullopt;
  return std::vector<std::size_t>(batch->ids, batch->ids + batch->size);
}

void PlanSampler::save(torch::serialize::OutputArchive& archive) const {
  pruner_->sync_scores();
  std::ostringstream out;
  write_pruner(*pruner_, out);
  const std::string bytes = out.str();
  at::Tensor tensor = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
  std::memcpy(tensor.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  archive.write(kArchiveKey, tensor, /*is_buffer=*/true);
}

void PlanSampler::load(torch::serialize::InputArchive& archive) {
  at::Tensor tensor;
  archive.read(kArchiveKey, tensor, /*is_buffer=*/true);
  WINNOW_THROW_IF_NOT(tensor.defined() && tensor.scalar_type() == at::kByte && tensor.dim() == 1,
                      "PlanSampler::load: the archive's '{}' entry is not a winnow pruner state",
                      kArchiveKey);
  tensor = tensor.contiguous();
  std::istringstream in(std::string(reinterpret_cast<const char*>(tensor.data_ptr<std::uint8_t>()),
                                    static_cast<std::size_t>(tensor.numel())));
  DynamicPruner restored = read_pruner(in, "torch archive");
  WINNOW_THROW_IF_NOT(restored.num_samples() == pruner_->num_samples(),
                      "PlanSampler::load: the archive holds a pruner for {} samples, this "
                      "sampler serves {}",
                      restored.num_samples(), pruner_->num_samples());
  pruner_->restore(std::move(restored));
}

double PlanSampler::seconds_spent() const {
  return static_cast<double>(*nanoseconds_) * 1e-9;
}

}  // namespace winnow
