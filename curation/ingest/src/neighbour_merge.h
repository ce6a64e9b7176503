// NeighbourMerge: a record's nearest judged samples gathered from several
// sources (a row of its chunk's search, a search of its own, the chunk's
// samples decided since, a bulk job's prior list) and cut to the best k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

#include "winnow/index/vector_index.h"

namespace winnow::curation::ingest {

class NeighbourMerge {
 public:
  void clear() { merged_.clear(); }
  void add(float similarity, std::int64_t id) { merged_.emplace_back(similarity, id); }
  // Row `row` of a search, up to its first empty slot.
  void add_row(const index::SearchResults& found, std::size_t row);
  // A search of `index` for `vector` alone, its `k` nearest.
  void add_search(const index::VectorIndex& index, const float* vector, std::size_t k);
  // How many gathered samples score at least `similarity`.
  std::size_t count_at_least(float similarity) const;
  // The best `k` gathered, but those in `left_out`, as one query's results:
  // best first, padded with -1.
  index::SearchResults best(std::size_t k, const std::unordered_set<std::int64_t>& left_out);

 private:
  std::vector<std::pair<float, std::int64_t>> merged_;
};

}  // namespace winnow::curation::ingest
