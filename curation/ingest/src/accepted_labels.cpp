#include "accepted_labels.h"

#include <algorithm>
#include <cstddef>

#include "winnow/error.h"

namespace winnow::curation::ingest {

void AcceptedLabels::set(std::int64_t id, int label) {
  WINNOW_THROW_IF_NOT(id >= 0, "sample id {} is negative", id);
  const auto i = static_cast<std::size_t>(id);
  if (i >= labels_.size()) labels_.resize(std::max(i + 1, labels_.size() * 3 / 2), kNone);
  labels_[i] = label;
}

std::optional<int> AcceptedLabels::find(std::int64_t id) const {
  const auto i = static_cast<std::size_t>(id);
  if (id < 0 || i >= labels_.size() || labels_[i] == kNone) return std::nullopt;
  return labels_[i];
}

void AcceptedLabels::erase(std::int64_t id) {
  const auto i = static_cast<std::size_t>(id);
  if (id >= 0 && i < labels_.size()) labels_[i] = kNone;
}

}  // namespace winnow::curation::ingest
