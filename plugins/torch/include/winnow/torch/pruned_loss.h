// PrunedLoss: the one-call loss helper of dynamic pruning. It records each
// sample's raw loss as its score and returns mean(w_i * l_i) with the current
// plan's weights; it never modifies the caller's tensor and keeps autograd.
// On a non-CPU device scores stay on the device (no per-step sync), so invalid
// input found there is skipped and thrown (winnow::Error) at the next epoch
// boundary; ids given on the CPU are checked at once.
// Details: docs/pruning.md#the-loss-helper-prunedloss
#pragma once

#include <cstdint>
#include <memory>

#include <ATen/ATen.h>

#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

class PrunedLoss {
 public:
  // Where scores are recorded during an epoch: in the pruner's host table
  // (the default on the CPU) or in tensors on `device` (the default elsewhere;
  // forcing it on the CPU exercises the device path without a GPU).
  enum class Mode { Automatic, HostTable, DeviceTables };

  explicit PrunedLoss(std::shared_ptr<DynamicPruner> pruner, at::Device device = at::kCPU,
                      Mode mode = Mode::Automatic);
  ~PrunedLoss();
  PrunedLoss(PrunedLoss&&) noexcept;
  PrunedLoss& operator=(PrunedLoss&&) noexcept;
  PrunedLoss(const PrunedLoss&) = delete;
  PrunedLoss& operator=(const PrunedLoss&) = delete;

  // per_sample_loss: [B] unreduced losses; ids: [B] integer sample ids.
  at::Tensor operator()(const at::Tensor& per_sample_loss, const at::Tensor& ids);

  at::Device device() const;

 private:
  struct DeviceState;
  std::shared_ptr<DynamicPruner> pruner_;
  std::shared_ptr<DeviceState> state_;  // null on the CPU
};

}  // namespace winnow
