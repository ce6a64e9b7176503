// Shared fixtures for the index tests: clustered unit vectors, brute-force
// neighbours and a scratch directory.
#pragma once

#include "support/temp_dir.h"
#include "winnow/index/vector_index.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace winnow::index::test {

// n vectors of dimension d around `clusters` random centres (row-major),
// L2-normalised. The offsets from the centres live mostly in a random
// `latent`-dimensional subspace (real embeddings have a low intrinsic
// dimension; isotropic noise in all d dimensions makes any ANN index look
// bad), plus a little isotropic noise. latent = 0 gives isotropic offsets.
// spread scales the offsets relative to the centres.
inline std::vector<float> clustered_vectors(std::size_t n, std::size_t d, std::size_t clusters,
                                            std::uint32_t seed, float spread = 0.35f,
                                            std::size_t latent = 32) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centres(clusters * d);
  for (float& c : centres) {
    c = normal(rng);
  }
  // Mixing matrix d x latent, scaled so that an offset has about the same
  // norm as an isotropic one.
  std::vector<float> mixing(d * latent);
  const float scale = latent > 0 ? 1.0f / std::sqrt(static_cast<float>(latent)) : 0.0f;
  for (float& m : mixing) {
    m = normal(rng) * scale;
  }
  const float isotropic = latent > 0 ? 0.3f : 1.0f;
  std::uniform_int_distribution<std::size_t> pick(0, clusters - 1);
  std::vector<float> z(latent);
  std::vector<float> out(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = pick(rng);
    for (float& v : z) {
      v = normal(rng);
    }
    double norm2 = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      float offset = isotropic * normal(rng);
      for (std::size_t l = 0; l < latent; ++l) {
        offset += mixing[j * latent + l] * z[l];
      }
      const float v = centres[c * d + j] + spread * offset;
      out[i * d + j] = v;
      norm2 += static_cast<double>(v) * v;
    }
    const auto inv = static_cast<float>(1.0 / std::sqrt(norm2));
    for (std::size_t j = 0; j < d; ++j) {
      out[i * d + j] *= inv;
    }
  }
  return out;
}

// Base vectors and queries drawn from the same clusters.
struct Dataset {
  std::vector<float> base;
  std::vector<float> queries;
};

inline Dataset clustered_dataset(std::size_t n, std::size_t num_queries, std::size_t d,
                                 std::size_t clusters, std::uint32_t seed,
                                 std::size_t latent = 32) {
  std::vector<float> all = clustered_vectors(n + num_queries, d, clusters, seed, 0.35f, latent);
  Dataset out;
  out.base.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n * d));
  out.queries.assign(all.begin() + static_cast<std::ptrdiff_t>(n * d), all.end());
  return out;
}

inline std::vector<std::int64_t> sequential_ids(std::size_t n, std::int64_t first = 0,
                                                std::int64_t step = 1) {
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = first + static_cast<std::int64_t>(i) * step;
  }
  return ids;
}

inline std::vector<float> normalized(std::vector<float> v, std::size_t d) {
  for (std::size_t i = 0; i < v.size() / d; ++i) {
    double norm2 = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      norm2 += static_cast<double>(v[i * d + j]) * v[i * d + j];
    }
    const auto inv = static_cast<float>(1.0 / std::sqrt(norm2));
    for (std::size_t j = 0; j < d; ++j) {
      v[i * d + j] *= inv;
    }
  }
  return v;
}

// Mean recall@k of `approx` against the exact results: the share of each
// query's exact top-k (its real results, not padding) that `approx` returns.
inline double recall(const SearchResults& approx, const SearchResults& exact, std::size_t k) {
  double hits = 0.0;
  for (std::size_t q = 0; q < exact.num_queries; ++q) {
    std::set<std::int64_t> truth;
    for (std::size_t r = 0; r < k && r < exact.count(q); ++r) {
      truth.insert(exact.id(q, r));
    }
    for (std::size_t r = 0; r < k && r < approx.count(q); ++r) {
      hits += truth.count(approx.id(q, r)) ? 1.0 : 0.0;
    }
  }
  return hits / static_cast<double>(exact.num_queries * k);
}

struct Neighbour {
  std::int64_t id;
  double similarity;
};

// Exact top-k by cosine similarity (double precision), skipping `excluded`.
inline std::vector<Neighbour> brute_force(const std::vector<float>& base,
                                          const std::vector<std::int64_t>& ids, const float* query,
                                          std::size_t d, std::size_t k,
                                          const std::vector<std::int64_t>& excluded = {}) {
  std::vector<Neighbour> all;
  double qn = 0.0;
  for (std::size_t j = 0; j < d; ++j) {
    qn += static_cast<double>(query[j]) * query[j];
  }
  qn = std::sqrt(qn);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (std::find(excluded.begin(), excluded.end(), ids[i]) != excluded.end()) {
      continue;
    }
    double dot = 0.0;
    double bn = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      dot += static_cast<double>(query[j]) * base[i * d + j];
      bn += static_cast<double>(base[i * d + j]) * base[i * d + j];
    }
    all.push_back({ids[i], dot / (qn * std::sqrt(bn))});
  }
  const std::size_t kk = std::min(k, all.size());
  std::partial_sort(
      all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kk), all.end(),
      [](const Neighbour& a, const Neighbour& b) { return a.similarity > b.similarity; });
  all.resize(kk);
  return all;
}

// A fresh directory for one test (tests/support/temp_dir.h).
using ScratchDir = winnow::test::TempDir;

}  // namespace winnow::index::test
