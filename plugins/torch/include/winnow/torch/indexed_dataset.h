// Datasets whose batches carry each sample's id.
//
// The ids travel inside the batch, never through a side channel, so loaders
// that read ahead or fetch batches in worker threads always pair a batch's
// losses with the right ids (the InfoBatch reference pairs them with the most
// recently *yielded* batch, which breaks with read-ahead loaders).
#pragma once

#include <cstddef>
#include <vector>

#include <torch/data/datasets/base.h>
#include <torch/data/example.h>
#include <torch/types.h>

namespace winnow {

struct IndexedBatch {
  at::Tensor data;    // [B, ...]
  at::Tensor target;  // [B, ...]
  at::Tensor ids;     // [B] int64 sample ids, on the CPU
};

// In-memory tensors (first dimension = sample), batched with index_select:
// the fast path for data sets that fit in memory.
class IndexedTensorDataset
    : public torch::data::datasets::BatchDataset<IndexedTensorDataset, IndexedBatch,
                                                 std::vector<std::size_t>> {
 public:
  IndexedTensorDataset(at::Tensor data, at::Tensor targets);
  IndexedBatch get_batch(std::vector<std::size_t> ids) override;
  torch::optional<std::size_t> size() const override;

 private:
  at::Tensor data_;
  at::Tensor targets_;
};

// Ids as an int64 tensor; throws naming the first id >= size.
at::Tensor ids_to_tensor(const std::vector<std::size_t>& ids, std::size_t size);

// Wraps any map-style torch dataset of Example<> (get(i) -> {data, target}):
// fetches each example and stacks them.
template <typename Inner>
class IndexedDataset
    : public torch::data::datasets::BatchDataset<IndexedDataset<Inner>, IndexedBatch,
                                                 std::vector<std::size_t>> {
 public:
  explicit IndexedDataset(Inner inner) : inner_(std::move(inner)) {}

  IndexedBatch get_batch(std::vector<std::size_t> ids) override {
    const std::size_t n = inner_.size().value();
    at::Tensor id_tensor = ids_to_tensor(ids, n);
    std::vector<at::Tensor> data;
    std::vector<at::Tensor> targets;
    data.reserve(ids.size());
    targets.reserve(ids.size());
    for (std::size_t id : ids) {
      auto example = inner_.get(id);
      data.push_back(std::move(example.data));
      targets.push_back(std::move(example.target));
    }
    return IndexedBatch{at::stack(data), at::stack(targets), id_tensor};
  }
  torch::optional<std::size_t> size() const override { return inner_.size(); }

 private:
  Inner inner_;
};

}  // namespace winnow
