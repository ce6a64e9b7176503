#include "winnow/torch/distributed_pruned_loss.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <vector>

#include "tensor_shape.h"
#include "winnow/error.h"

namespace winnow {
at::Tensor all_gather(c10d::ProcessGroup& group, const at::Tensor& local) {
  const int world = group.getSize();
  std::vector<at::Tensor> input{local};
  std::vector<std::vector<at::Tensor>> output(1);
  output[0].reserve(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) output[0].push_back(at::empty_like(local));
  group.allgather(output, input)->wait();
  return at::cat(output[0]);
}

c10::intrusive_ptr<c10d::ProcessGroup> make_gloo_group(const std::string& init_file, int world_size,
                                                       int rank, const std::string& hostname) {
  WINNOW_THROW_IF_NOT(world_size >= 1 && rank >= 0 && rank < world_size,
                      "make_gloo_group: rank {} is out of range for world size {}", rank,
                      world_size);
  auto store = c10::make_intrusive<c10d::FileStore>(init_file, world_size);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(hostname));
  options->threads = 1;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

DistributedPrunedLoss::DistributedPrunedLoss(std::shared_ptr<DynamicPruner> pruner,
                                             c10::intrusive_ptr<c10d::ProcessGroup> group)
    : pruner_(std::move(pruner)), group_(std::move(group)) {
  WINNOW_THROW_IF_NOT(pruner_ != nullptr, "DistributedPrunedLoss: the pruner is null");
  WINNOW_THROW_IF_NOT(group_.defined(), "DistributedPrunedLoss: the process group is null");
  WINNOW_THROW_IF_NOT(static_cast<std::uint64_t>(group_->getSize()) == pruner_->world_size() &&
                          static_cast<std::uint64_t>(group_->getRank()) == pruner_->rank(),
                      "DistributedPrunedLoss: the process group is rank {} of {}, but the pruner "
                      "was set up as rank {} of {} (PrunerOptions::rank, world_size)",
                      group_->getRank(), group_->getSize(), pruner_->rank(), pruner_->world_size());
  WINNOW_THROW_IF_NOT(!pruner_->has_score_sync(),
                      "DistributedPrunedLoss: this pruner records scores on a device through a "
                      "PrunedLoss; use one loss helper per pruner");
}

at::Tensor DistributedPrunedLoss::operator()(const at::Tensor& per_sample_loss,
                                             const at::Tensor& ids) {
  WINNOW_THROW_IF_NOT(per_sample_loss.defined() && per_sample_loss.dim() == 1 &&
                          at::isFloatingType(per_sample_loss.scalar_type()),
                      "DistributedPrunedLoss: the per-sample loss must be a floating-point "
                      "tensor of shape [B] (reduction 'none'), got {}",
                      detail::shape_of(per_sample_loss));
  WINNOW_THROW_IF_NOT(ids.defined() && ids.dim() == 1 && !at::isFloatingType(ids.scalar_type()) &&
                          ids.scalar_type() != at::kBool,
                      "DistributedPrunedLoss: ids must be a 1-D integer tensor, got {}",
                      detail::shape_of(ids));
  WINNOW_THROW_IF_NOT(ids.size(0) == per_sample_loss.size(0),
                      "DistributedPrunedLoss: {} losses but {} ids; each sample needs its id",
                      per_sample_loss.size(0), ids.size(0));
  c10d::ProcessGroup& group = *group_;
  const int world = group.getSize();
  const std::int64_t batch = ids.size(0);

  // 1. Batch sizes: the gathers below need the same size everywhere.
  const at::Tensor sizes = all_gather(group, at::full({1}, batch, at::kLong));
  const auto* size_ptr = sizes.data_ptr<std::int64_t>();
  for (int r = 0; r < world; ++r) {
    WINNOW_THROW_IF_NOT(size_ptr[r] == batch,
                        "DistributedPrunedLoss: rank {} has a batch of {} but rank {} one of {}; "
                        "all ranks must use the same batch size (the pruner gives every rank a "
                        "shard of the same length)",
                        r, size_ptr[r], group.getRank(), batch);
  }

  // 2. Ids (int64) and raw losses (float32): two tensors, never one dtype.
  const at::Tensor local_ids = ids.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor local_losses = per_sample_loss.detach().to(at::kCPU, at::kFloat).contiguous();
  const at::Tensor all_ids = all_gather(group, local_ids);
  const at::Tensor all_losses = all_gather(group, local_losses);

  // 3. Every rank records every rank's observations, in rank order: the
  // score tables stay identical. Checks run on the same data everywhere, so
  // every rank throws alike.
  const auto* all_id_ptr = all_ids.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < all_ids.numel(); ++i) {
    WINNOW_THROW_IF_NOT(all_id_ptr[i] >= 0,
                        "DistributedPrunedLoss: negative sample id {} from rank {}", all_id_ptr[i],
                        i / batch);
  }
  pruner_->update(reinterpret_cast<const std::uint64_t*>(all_id_ptr), all_losses.data_ptr<float>(),
                  static_cast<std::size_t>(all_ids.numel()));

  // 4. The local batch's weighted mean.
  at::Tensor weights = at::empty({batch}, at::kFloat);
  pruner_->weights(reinterpret_cast<const std::uint64_t*>(local_ids.data_ptr<std::int64_t>()),
                   static_cast<std::size_t>(batch), weights.data_ptr<float>());
  return (per_sample_loss * weights.to(per_sample_loss.device(), per_sample_loss.scalar_type()))
      .mean();
}

}  // namespace winnow
