// PrunedLoss: the one-call loss helper of dynamic pruning. It records each
// sample's raw loss as its score and returns mean(w_i * l_i) with the current
// plan's weights; it never modifies the caller's tensor and keeps autograd.
// On a non-CPU device each step's ids and losses are logged on the device (no
// per-step sync) and replayed into the pruner, in order, at the next epoch
// boundary: the policy sees what the host path shows it, at the epoch's end
// rather than step by step. Invalid input found there is skipped and thrown
// (winnow::Error) at that boundary; ids given on the CPU are checked at once.
// The log holds 13 bytes of device memory per observation of the epoch.
// Details: docs/pruning.md#the-loss-helper-prunedloss
#pragma once

#include <cstdint>
#include <memory>

#include <ATen/ATen.h>

#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

class PrunedLoss {
 public:
  // Where observations go during an epoch: into the pruner's host table
  // (the default on the CPU) or into a log on `device` (the default elsewhere;
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
