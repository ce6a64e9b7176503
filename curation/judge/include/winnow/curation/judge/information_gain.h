// InfoGrowth-style information gain of a new sample: the mean cosine distance
// (1 - cosine similarity) to its k = 4 nearest accepted neighbours, computed
// before the sample is inserted. Range [0, 2]; near 0 for redundant samples.
// With an empty index the gain is 1.0 (maximal novelty by definition: cosine
// distance to an unrelated direction); with fewer than k neighbours it is the
// mean over those found.
#pragma once

#include <cstddef>

#include "winnow/index/vector_index.h"

namespace winnow::curation::judge {

constexpr int kGainNeighbours = 4;

// Gain from row `query` of a search already made (at most k of its entries).
double information_gain(const index::SearchResults& results, std::size_t query,
                        int k = kGainNeighbours);

// Searches `index` for `embedding` (index.dim() floats) and computes the gain.
double information_gain(const index::VectorIndex& index, const float* embedding,
                        int k = kGainNeighbours);

}  // namespace winnow::curation::judge
