#include "neighbour_merge.h"

#include <algorithm>
#include <limits>

namespace winnow::curation::ingest {

void NeighbourMerge::add_row(const index::SearchResults& found, std::size_t row) {
  for (std::size_t r = 0; r < found.k; ++r) {
    if (found.id(row, r) < 0) break;
    merged_.emplace_back(found.similarity(row, r), found.id(row, r));
  }
}

void NeighbourMerge::add_search(const index::VectorIndex& index, const float* vector,
                                std::size_t k) {
  add_row(index.search(1, vector, static_cast<int>(k)), 0);
}

std::size_t NeighbourMerge::count_at_least(float similarity) const {
  return static_cast<std::size_t>(
      std::count_if(merged_.begin(), merged_.end(),
                    [similarity](const auto& m) { return m.first >= similarity; }));
}

index::SearchResults NeighbourMerge::best(std::size_t k,
                                          const std::unordered_set<std::int64_t>& left_out) {
  if (!left_out.empty()) {
    merged_.erase(std::remove_if(merged_.begin(), merged_.end(),
                                 [&](const auto& m) { return left_out.count(m.second) > 0; }),
                  merged_.end());
  }
  const std::size_t keep = std::min(merged_.size(), k);
  std::partial_sort(merged_.begin(), merged_.begin() + keep, merged_.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  index::SearchResults best;
  best.num_queries = 1;
  best.k = k;
  best.ids.assign(k, -1);
  best.similarities.assign(k, -std::numeric_limits<float>::infinity());
  for (std::size_t r = 0; r < keep; ++r) {
    best.similarities[r] = merged_[r].first;
    best.ids[r] = merged_[r].second;
  }
  return best;
}

}  // namespace winnow::curation::ingest
