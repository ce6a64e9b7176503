// Prior neighbours: for vectors that arrive in a known order, each one's
// nearest vectors among those that came before it. This is what an ingest
// would find in its index when the record arrives (the index then holds the
// earlier records only), computed for many records at once; winnow.dask's
// workers compute it inside each coarse cluster (docs/distributed-curation.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::index {

// Row r (one per wanted vector, in input order) holds up to k neighbours:
// their positions, best inner product first (ties: the smaller position
// first), padded with position -1 and similarity -infinity.
struct PriorNeighbourLists {
  std::size_t k = 0;
  std::vector<std::int64_t> positions;  // [rows, k]
  std::vector<float> similarities;      // [rows, k]
  // 1 when the row lists every earlier vector (there were at most k), so the
  // row is exact however many of its neighbours a reader skips.
  std::vector<std::uint8_t> complete;  // [rows]
  std::size_t rows() const { return complete.size(); }
};

// `vectors`: n rows of d floats; `positions`: each row's place in the order
// (distinct); `wanted`: n flags, the rows to answer (the others are searched
// only). A vector's neighbours are the rows with a smaller position, scored
// by inner_product (exact_scores.h), so the similarities are bit-identical
// to the ones an ingest computes for the same two vectors.
PriorNeighbourLists prior_neighbours(const float* vectors, const std::int64_t* positions,
                                     const std::uint8_t* wanted, std::size_t n, std::size_t d,
                                     std::size_t k);

}  // namespace winnow::index
