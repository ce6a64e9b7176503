#include "winnow/curation/judge/information_gain.h"

#include <algorithm>

#include "winnow/error.h"

namespace winnow::curation::judge {

double information_gain(const index::SearchResults& results, std::size_t query, int k) {
  WINNOW_THROW_IF_NOT(k >= 1, "information gain: k={} must be >= 1", k);
  WINNOW_THROW_IF_NOT(results.k == 0 || query < results.num_queries,
                      "information gain: query row {} out of {} rows", query, results.num_queries);
  double sum = 0.0;
  std::size_t n = 0;
  const std::size_t limit = std::min(results.k, static_cast<std::size_t>(k));
  for (std::size_t r = 0; r < limit; ++r) {
    if (results.id(query, r) < 0) {
      break;
    }
    sum += 1.0 - std::clamp(static_cast<double>(results.similarity(query, r)), -1.0, 1.0);
    ++n;
  }
  return n == 0 ? 1.0 : sum / static_cast<double>(n);
}

double information_gain(const index::VectorIndex& index, const float* embedding, int k) {
  WINNOW_THROW_IF_NOT(k >= 1, "information gain: k={} must be >= 1", k);
  if (index.size() == 0) {
    return 1.0;
  }
  return information_gain(index.search(1, embedding, k), 0, k);
}

}  // namespace winnow::curation::judge
