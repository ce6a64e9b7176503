// DistributedPrunedLoss: PrunedLoss for data-parallel training over a c10d
// (Gloo) process group; built only when the Gloo headers are found
// (WINNOW_TORCH_HAS_DISTRIBUTED is then defined). Each call is a collective:
// every rank calls it every step. It all-gathers ids and losses so all ranks
// keep identical scores and plans, and returns the local batch's weighted mean.
// Unequal batch sizes or bad ids/losses on any rank make every rank throw
// winnow::Error alike, after the gathers, so no rank hangs.
// Details: docs/distributed.md#distributedprunedloss-libtorch
#pragma once

#include <memory>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

// A Gloo process group of `world_size` ranks rendezvousing through a
// c10d::FileStore at `init_file` (a path every rank can reach; remove it
// before a new run), over the loopback or `hostname`'s address.
c10::intrusive_ptr<c10d::ProcessGroup> make_gloo_group(const std::string& init_file, int world_size,
                                                       int rank,
                                                       const std::string& hostname = "127.0.0.1");

// All-gathers a 1-D tensor of the same length from every rank of `group` and
// returns their rank-ordered concatenation (blocking).
at::Tensor all_gather(c10d::ProcessGroup& group, const at::Tensor& local);

class DistributedPrunedLoss {
 public:
  // The group's size and rank must match the pruner's world_size and rank.
  DistributedPrunedLoss(std::shared_ptr<DynamicPruner> pruner,
                        c10::intrusive_ptr<c10d::ProcessGroup> group);

  // per_sample_loss: [B] unreduced losses; ids: [B] integer sample ids.
  at::Tensor operator()(const at::Tensor& per_sample_loss, const at::Tensor& ids);

  const c10::intrusive_ptr<c10d::ProcessGroup>& group() const { return group_; }

 private:
  std::shared_ptr<DynamicPruner> pruner_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
};

}  // namespace winnow
