// DistributedPrunedLoss: PrunedLoss for data-parallel training over a c10d
// process group (Gloo). Built only when the Gloo headers are found
// (WINNOW_TORCH_HAS_DISTRIBUTED is then defined for users of winnow::torch).
//
//   PrunerOptions o; ...; o.world_size = W; o.rank = R;   // every rank: same seed
//   auto pruner = std::make_shared<winnow::DynamicPruner>(o);
//   auto group = winnow::make_gloo_group("/shared/init-file", W, R);
//   winnow::DistributedPrunedLoss pruned_loss(pruner, group);
//   auto loss = pruned_loss(per_sample, batch.ids);  // collective: every rank calls it
//
// Every step it all-gathers the local batch's ids (int64) and raw per-sample
// losses (float32) from all ranks, as two separate tensors (ids are never
// squeezed through a float: ids above 2^24 stay exact), and records all of
// them in the pruner in rank order, so every rank's score table stays
// identical and every rank builds the same next plan. It returns the
// weighted mean of the LOCAL batch, mean(w_i * l_i); gradients are averaged
// across ranks by the caller (DDP or an allreduce), as usual.
//
// Batches must have the same size on all ranks, which the pruner's equal
// shard lengths guarantee when all ranks use the same batch size; a small
// all-gather of the sizes comes first and every rank throws the same error
// otherwise. Invalid ids or non-finite losses on any rank make every rank
// throw (after the gathers, so no rank is left waiting). Scores are kept in
// the host table (CPU); losses on another device are copied to the host.
//
// Per step and rank: 8 bytes (size) + 8*B (ids) + 4*B (losses) sent, and
// W times that received; see docs/distributed.md.
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
c10::intrusive_ptr<c10d::ProcessGroup> make_gloo_group(const std::string& init_file,
                                                       int world_size, int rank,
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
