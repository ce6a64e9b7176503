#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "winnow/error.h"
#include "winnow/index/coarse_clusters.h"
#include "winnow/index/exact_scores.h"
#include "winnow/index/prior_neighbours.h"
#include "support/unit_vectors.h"

using namespace winnow::index;

using winnow::test::unit_vectors;

TEST_CASE("prior neighbours are the best earlier vectors, by brute force", "[prior]") {
  const std::size_t d = 13;
  for (const std::size_t n : {1u, 5u, 37u, 200u}) {
    for (const std::size_t k : {1u, 4u, 30u}) {
      const std::vector<float> v = unit_vectors(n, d, static_cast<unsigned>(n * 100 + k));
      // Positions shuffled and sparse; every third row wanted, and a few copies
      // (equal scores) to exercise the tie order.
      std::vector<std::int64_t> positions(n);
      std::iota(positions.begin(), positions.end(), 0);
      std::shuffle(positions.begin(), positions.end(), std::mt19937(static_cast<unsigned>(n)));
      for (auto& p : positions) p = p * 7 + 3;
      std::vector<float> vectors = v;
      if (n > 10) std::copy_n(vectors.begin(), d, vectors.begin() + 5 * d);
      std::vector<std::uint8_t> wanted(n);
      for (std::size_t i = 0; i < n; ++i) wanted[i] = i % 3 != 1;
      const PriorNeighbourLists lists =
          prior_neighbours(vectors.data(), positions.data(), wanted.data(), n, d, k);
      REQUIRE(lists.k == k);
      std::size_t row = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (!wanted[i]) continue;
        // The brute force: every earlier row, sorted by (score desc, position asc).
        std::vector<std::pair<float, std::int64_t>> earlier;
        for (std::size_t j = 0; j < n; ++j) {
          if (positions[j] < positions[i]) {
            earlier.emplace_back(inner_product(&vectors[i * d], &vectors[j * d], d), positions[j]);
          }
        }
        std::sort(earlier.begin(), earlier.end(), [](const auto& a, const auto& b) {
          return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        INFO("n " << n << " k " << k << " row " << i);
        CHECK(lists.complete[row] == (earlier.size() <= k ? 1 : 0));
        for (std::size_t r = 0; r < k; ++r) {
          if (r < earlier.size()) {
            CHECK(lists.positions[row * k + r] == earlier[r].second);
            CHECK(lists.similarities[row * k + r] == earlier[r].first);  // bit for bit
          } else {
            CHECK(lists.positions[row * k + r] == -1);
            CHECK(std::isinf(lists.similarities[row * k + r]));
          }
        }
        ++row;
      }
      CHECK(row == lists.rows());
    }
  }
}

TEST_CASE("prior neighbours refuse repeated positions and values that are not finite", "[prior]") {
  std::vector<float> v = unit_vectors(3, 4, 1);
  std::vector<std::int64_t> positions{0, 1, 1};
  std::vector<std::uint8_t> wanted{1, 1, 1};
  CHECK_THROWS_WITH(prior_neighbours(v.data(), positions.data(), wanted.data(), 3, 4, 2),
                    Catch::Contains("position 1 is given twice"));
  positions = {0, 1, 2};
  v[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(prior_neighbours(v.data(), positions.data(), wanted.data(), 3, 4, 2),
                    Catch::Contains("vector 1"));
}

TEST_CASE("coarse clusters: seeded centroids, and each vector's nearest ones", "[prior]") {
  const std::size_t n = 600, d = 8, clusters = 6;
  // Six tight groups around random unit centres.
  const std::vector<float> centres = unit_vectors(clusters, d, 3);
  std::vector<float> x = unit_vectors(n, d, 4);
  for (std::size_t i = 0; i < n; ++i) {
    float norm = 0;
    for (std::size_t j = 0; j < d; ++j) {
      float& value = x[i * d + j];
      value = centres[(i % clusters) * d + j] + 0.05f * value;
      norm += value * value;
    }
    for (std::size_t j = 0; j < d; ++j) x[i * d + j] /= std::sqrt(norm);
  }
  const std::vector<float> a = train_centroids(x.data(), n, d, clusters, 10, 1);
  const std::vector<float> b = train_centroids(x.data(), n, d, clusters, 10, 1);
  REQUIRE(a.size() == clusters * d);
  CHECK(a == b);
  const std::vector<std::int32_t> nearest =
      nearest_centroids(x.data(), n, d, a.data(), clusters, 2);
  REQUIRE(nearest.size() == n * 2);
  // Each vector's two nearest centroids, by brute force (k-means may merge
  // two groups: partitioning needs no optimum, only a fixed answer).
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<float, std::int32_t>> by_score;
    for (std::size_t c = 0; c < clusters; ++c) {
      by_score.emplace_back(-inner_product(&x[i * d], &a[c * d], d), static_cast<std::int32_t>(c));
    }
    std::sort(by_score.begin(), by_score.end());
    CHECK(nearest[i * 2] == by_score[0].second);
    CHECK(nearest[i * 2 + 1] == by_score[1].second);
  }
  // The centroids are unit vectors near the data.
  double mean_best = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mean_best += inner_product(&x[i * d], &a[static_cast<std::size_t>(nearest[i * 2]) * d], d);
  }
  CHECK(mean_best / n > 0.6);
  for (std::size_t c = 0; c < clusters; ++c) {
    CHECK(inner_product(&a[c * d], &a[c * d], d) == Approx(1.0f).epsilon(1e-4));
  }
  CHECK_THROWS_WITH(train_centroids(x.data(), 3, d, 4, 10, 1),
                    Catch::Contains("at least as many sample vectors"));
}
