// Coarse clusters of unit vectors: spherical k-means centroids trained on a
// sample, and each vector's nearest centroids. winnow.dask partitions a job's
// vectors by them so that each cluster can be searched on its own
// (docs/distributed-curation.md), as SemDeDup partitions its embeddings.
// The IVF index splits its cells, and the groups of its cells, in two with
// split_in_two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::index {

// `clusters` unit centroids (row-major, clusters x d) of the n vectors `x`
// by spherical k-means (FAISS's, on one thread, `iterations` rounds, seeded:
// the same input gives the same centroids). Needs n >= clusters >= 1.
std::vector<float> train_centroids(const float* x, std::size_t n, std::size_t d,
                                   std::size_t clusters, int iterations, std::uint64_t seed);

// Two sides of n >= 2 unit vectors: spherical 2-means (train_centroids), then
// each vector to the centroid it is more similar to (ties: the first).
struct TwoWaySplit {
  std::vector<float> centroids;  // 2 x d: the first, then the second
  std::vector<char> second;      // per vector: 1 when it goes to the second
  std::size_t seconds = 0;       // how many go to the second
  // Whether both sides have members.
  bool splits() const { return seconds > 0 && seconds < second.size(); }
};
TwoWaySplit split_in_two(const float* x, std::size_t n, std::size_t d, int iterations,
                         std::uint64_t seed);

// For each of the n vectors, the `m` centroids with the highest inner
// product, best first (ties: the lower centroid): n x m cluster numbers.
// m is capped at the number of centroids.
std::vector<std::int32_t> nearest_centroids(const float* x, std::size_t n, std::size_t d,
                                            const float* centroids, std::size_t clusters,
                                            std::size_t m);

}  // namespace winnow::index
