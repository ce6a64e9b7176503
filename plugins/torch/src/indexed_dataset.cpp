#include "winnow/torch/indexed_dataset.h"

#include "tensor_shape.h"
#include "winnow/error.h"

namespace winnow {

at::Tensor ids_to_tensor(const std::vector<std::size_t>& ids, std::size_t size) {
  at::Tensor tensor = at::empty({static_cast<std::int64_t>(ids.size())}, at::kLong);
  auto* out = tensor.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    WINNOW_THROW_IF_NOT(ids[i] < size,
                        "dataset: sample id {} at position {} is out of range "
                        "(the data set has {} samples)",
                        ids[i], i, size);
    out[i] = static_cast<std::int64_t>(ids[i]);
  }
  return tensor;
}

IndexedTensorDataset::IndexedTensorDataset(at::Tensor data, at::Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  WINNOW_THROW_IF_NOT(data_.defined() && targets_.defined() && data_.dim() >= 1 &&
                          targets_.dim() >= 1 && data_.size(0) == targets_.size(0),
                      "IndexedTensorDataset: data {} and targets {} must have the same first "
                      "dimension (one row per sample)",
                      detail::shape_of(data_), detail::shape_of(targets_));
}

IndexedBatch IndexedTensorDataset::get_batch(std::vector<std::size_t> ids) {
  at::Tensor id_tensor = ids_to_tensor(ids, static_cast<std::size_t>(data_.size(0)));
  return IndexedBatch{data_.index_select(0, id_tensor), targets_.index_select(0, id_tensor),
                      id_tensor};
}

torch::optional<std::size_t> IndexedTensorDataset::size() const {
  return static_cast<std::size_t>(data_.size(0));
}

}  // namespace winnow
