#include "winnow/index/coarse_clusters.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>

#include "faiss/one_omp_thread.h"
#include "kernels/simd_distance.h"
#include "winnow/error.h"

namespace winnow::index {

std::vector<float> train_centroids(const float* x, std::size_t n, std::size_t d,
                                   std::size_t clusters, int iterations, std::uint64_t seed) {
  WINNOW_THROW_IF_NOT(d > 0 && clusters >= 1 && n >= clusters,
                      "coarse clusters: {} clusters need at least as many sample vectors, got {}",
                      clusters, n);
  WINNOW_THROW_IF_NOT(iterations >= 1, "coarse clusters: iterations must be positive, got {}",
                      iterations);
  faiss::ClusteringParameters cp;
  cp.niter = iterations;
  cp.spherical = true;
  cp.seed = static_cast<int>(seed & 0x7fffffff);
  cp.max_points_per_centroid = std::numeric_limits<int>::max();  // the caller samples
  // FAISS only warns below this many points per centroid, on stderr; the
  // callers split small groups (of IVF cells) on purpose.
  cp.min_points_per_centroid = 1;
  cp.verbose = false;
  faiss::Clustering kmeans(static_cast<int>(d), static_cast<int>(clusters), cp);
  faiss::IndexFlatIP assign(static_cast<faiss::Index::idx_t>(d));
  {
    // One thread: results that do not depend on the machine's core count, and
    // no OpenMP team spinning beside the caller's threads.
    const detail::OneOmpThread one_thread;
    kmeans.train(static_cast<faiss::Index::idx_t>(n), x, assign);
  }
  return kmeans.centroids;
}

TwoWaySplit split_in_two(const float* x, std::size_t n, std::size_t d, int iterations,
                         std::uint64_t seed) {
  TwoWaySplit out;
  out.centroids = train_centroids(x, n, d, 2, iterations, seed);
  const float* c0 = out.centroids.data();
  const float* c1 = c0 + d;
  out.second.resize(n);
  const InnerProductKernel kernel = inner_product_kernel();
  for (std::size_t i = 0; i < n; ++i) {
    const float* v = x + i * d;
    out.second[i] = kernel(v, c1, d) > kernel(v, c0, d) ? 1 : 0;
    out.seconds += static_cast<std::size_t>(out.second[i]);
  }
  return out;
}

std::vector<std::int32_t> nearest_centroids(const float* x, std::size_t n, std::size_t d,
                                            const float* centroids, std::size_t clusters,
                                            std::size_t m) {
  WINNOW_THROW_IF_NOT(d > 0 && clusters >= 1 && m >= 1,
                      "coarse clusters: need centroids and m >= 1");
  m = std::min(m, clusters);
  std::vector<std::int32_t> nearest(n * m);
  std::vector<float> scores(clusters);
  std::vector<std::int32_t> order(clusters);
  for (std::size_t i = 0; i < n; ++i) {
    inner_products(x + i * d, centroids, clusters, d, scores.data());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m), order.end(),
                      [&](std::int32_t a, std::int32_t b) {
                        return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
                      });
    std::copy_n(order.begin(), m, nearest.begin() + static_cast<std::ptrdiff_t>(i * m));
  }
  return nearest;
}

}  // namespace winnow::index
