#include "winnow/curation/dataset/lookup/accepted_labels.h"

#include <algorithm>
#include <cstddef>

#include "winnow/error.h"

namespace winnow::curation {

void AcceptedLabels::set(std::int64_t id, int label) {
  WINNOW_THROW_IF_NOT(id >= 0, "sample id {} is negative", id);
  const auto i = static_cast<std::size_t>(id);
  WINNOW_THROW_IF_NOT(label != kNone, "sample {}: label {} is out of range", id, label);
  if (i >= labels_.size()) labels_.resize(std::max(i + 1, labels_.size() * 3 / 2), kNone);
  if (labels_[i] == kNone) ++size_;
  labels_[i] = label;
}

std::optional<int> AcceptedLabels::find(std::int64_t id) const {
  const auto i = static_cast<std::size_t>(id);
  if (id < 0 || i >= labels_.size() || labels_[i] == kNone) return std::nullopt;
  return labels_[i];
}

void AcceptedLabels::erase(std::int64_t id) {
  const auto i = static_cast<std::size_t>(id);
  if (id >= 0 && i < labels_.size() && labels_[i] != kNone) {
    labels_[i] = kNone;
    --size_;
  }
}

void AcceptedLabelCache::flag(std::int64_t id) {
  const std::optional<int> label = accepted.find(id);
  if (!label) return;  // not held (no label, or annotations only)
  accepted.erase(id);
  --counts[*label];
  flagged.set(id, *label);
}

void AcceptedLabelCache::forget(std::int64_t id) {
  if (const std::optional<int> label = accepted.find(id)) {
    accepted.erase(id);
    --counts[*label];
  }
  flagged.erase(id);
}

void AcceptedLabelCache::clear_flag(std::int64_t id) {
  const std::optional<int> label = flagged.find(id);
  if (!label) return;
  flagged.erase(id);
  ++counts[*label];
  accepted.set(id, *label);
}

}  // namespace winnow::curation
