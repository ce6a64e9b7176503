// Coarse clusters of unit vectors: spherical k-means centroids trained on a
// sample, and each vector's nearest centroids. winnow.dask partitions a job's
// vectors by them so that each cluster can be searched on its own
// (docs/distributed-curation.md), as SemDeDup partitions its embeddings.
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

// For each of the n vectors, the `m` centroids with the highest inner
// product, best first (ties: the lower centroid): n x m cluster numbers.
// m is capped at the number of centroids.
std::vector<std::int32_t> nearest_centroids(const float* x, std::size_t n, std::size_t d,
                                            const float* centroids, std::size_t clusters,
                                            std::size_t m);

}  // namespace winnow::index
