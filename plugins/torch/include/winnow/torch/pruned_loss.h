// PrunedLoss: the one-call loss helper of dynamic pruning.
//
//   winnow::PrunedLoss pruned_loss(pruner, device);
//   auto per_sample = torch::nn::functional::cross_entropy(out, batch.target,
//       torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
//   auto loss = pruned_loss(per_sample, batch.ids);   // records scores, weights
//   loss.backward();
//
// It records each sample's raw loss as its score and returns mean(w_i * l_i)
// with the current plan's weights. It never modifies the caller's tensor and
// keeps autograd intact (fp16/bf16 losses are fine; scores are kept in fp32).
//
// On the CPU it updates the pruner's host table directly. On another device
// (CUDA) it keeps scores and weights as device tensors: the per-step path is a
// gather and a scatter on the device, with no device-to-host synchronisation.
// Scores come to the host once per epoch, just before the next plan is built.
// Invalid input found on the device (ids out of range, non-finite losses,
// negative ones unless the pruner allows them) is skipped there and reported as an error at that epoch boundary, since
// checking every step would force a synchronisation; ids given on the CPU (the
// usual case) are checked at once.
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
