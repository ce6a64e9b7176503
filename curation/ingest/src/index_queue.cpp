#include "index_queue.h"

#include <chrono>
#include <utility>

#include "winnow/clock.h"

#include "prepared_chunk.h"

namespace winnow::curation::ingest {

void IndexQueue::add(std::int64_t id, const std::vector<float>& vector, std::uint32_t home) {
  added_.ids.push_back(id);
  added_.vectors.insert(added_.vectors.end(), vector.begin(), vector.end());
  added_.homes.push_back(home);
}

void IndexQueue::end_block() {
  std::swap(previous_added_, added_);
  added_.clear();
  waiting_ = true;
}

void IndexQueue::join(index::VectorIndex& index) {
  if (!waiting_) return;
  waiting_ = false;
  if (previous_added_.ids.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  index.add(previous_added_.ids, previous_added_.vectors);
  add_seconds_ += seconds_since(t0);
}

// Folding in one list and then the other keeps the same best k as both at
// once: ties go to the lower id either way.
bool IndexQueue::fold_into(index::SearchResults& found, std::size_t rows, const float* queries,
                           std::size_t dim, std::size_t k, const ThreadPool& pool) const {
  bool folded = false;
  for (const Vectors* unindexed : {&previous_added_, &added_}) {
    if (unindexed->ids.empty()) continue;
    fold_in(found, rows, queries, unindexed->ids, unindexed->vectors, unindexed->homes, dim, k,
            pool);
    folded = true;
  }
  return folded;
}

}  // namespace winnow::curation::ingest
