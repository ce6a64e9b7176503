// The batched exact search behind FlatVectorIndex (index/src/flat_block_search.h):
// both kernels against a double-precision brute force, at sizes that are not
// multiples of the kernels' blocks (queries per panel, base rows per step and
// per block) and with k larger than the base.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "index_test_helpers.h"
#include "kernels/flat_block_search.h"

using namespace winnow::index;
using namespace winnow::index::test;

namespace {

std::vector<detail::FlatSearchKernel> available_kernels() {
  std::vector<detail::FlatSearchKernel> kernels{detail::FlatSearchKernel::sgemm};
  if (detail::fused_avx512_available()) kernels.push_back(detail::FlatSearchKernel::fused_avx512);
  return kernels;
}

std::string kernel_name(detail::FlatSearchKernel kernel) {
  return kernel == detail::FlatSearchKernel::sgemm ? "sgemm" : "fused_avx512";
}

// Rows of `base` by inner product with `query` in double precision, best
// first, ties to the lower row.
std::vector<std::pair<double, std::int64_t>> reference_ranking(const std::vector<float>& base,
                                                               std::size_t d, const float* query) {
  const std::size_t n = base.size() / d;
  std::vector<std::pair<double, std::int64_t>> ranked(n);
  for (std::size_t i = 0; i < n; ++i) {
    double dot = 0.0;
    for (std::size_t j = 0; j < d; ++j) dot += static_cast<double>(query[j]) * base[i * d + j];
    ranked[i] = {dot, static_cast<std::int64_t>(i)};
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  return ranked;
}

// Searches with `kernel` and checks every query's k slots against the
// reference: the same score at every rank (up to float rounding), a row
// whose true score is the one reported, no row twice, equal scores in row
// order, and -1 / -infinity past the base's end.
void check_search(detail::FlatSearchKernel kernel, const std::vector<float>& base,
                  const std::vector<float>& queries, std::size_t d, std::size_t k) {
  const std::size_t n = base.size() / d;
  const std::size_t num_queries = queries.size() / d;
  std::vector<float> scores(num_queries * k, 7.0f);
  std::vector<std::int64_t> labels(num_queries * k, -7);
  detail::flat_block_search(base.data(), n, d, queries.data(), num_queries, k, scores.data(),
                            labels.data(), kernel);
  const double tolerance = 1e-5;
  for (std::size_t q = 0; q < num_queries; ++q) {
    INFO(kernel_name(kernel) << " d=" << d << " n=" << n << " queries=" << num_queries << " k=" << k
                             << " query " << q);
    const auto ranked = reference_ranking(base, d, queries.data() + q * d);
    std::vector<double> true_score(n);
    for (const auto& [score, row] : ranked) true_score[static_cast<std::size_t>(row)] = score;
    std::vector<bool> seen(n, false);
    for (std::size_t r = 0; r < k; ++r) {
      INFO("rank " << r);
      const float score = scores[q * k + r];
      const std::int64_t label = labels[q * k + r];
      if (r >= n) {
        CHECK(label == -1);
        CHECK(score == -std::numeric_limits<float>::infinity());
        continue;
      }
      REQUIRE(label >= 0);
      REQUIRE(label < static_cast<std::int64_t>(n));
      const auto row = static_cast<std::size_t>(label);
      CHECK_FALSE(seen[row]);
      seen[row] = true;
      CHECK(std::abs(score - ranked[r].first) <= tolerance);
      CHECK(std::abs(score - true_score[row]) <= tolerance);
      if (r > 0 && score == scores[q * k + r - 1]) CHECK(labels[q * k + r - 1] < label);
    }
  }
}

}  // namespace

TEST_CASE("flat block search matches brute force at awkward sizes", "[flat][kernel]") {
  // 1001 rows: not a multiple of 4, 6 or 8 (rows per step) nor of 252 or 256
  // (rows per block). 21 queries take the fused kernel's 32-query panels, 77
  // its 64-query panels; neither fills its last panel.
  const std::size_t n = 1001;
  for (const std::size_t d : {std::size_t{1}, std::size_t{7}, std::size_t{65}, std::size_t{256}}) {
    std::vector<float> base = clustered_vectors(n, d, 12, static_cast<std::uint32_t>(d));
    // Exact duplicates: their scores tie to the bit, and the lower row must
    // come first.
    std::copy(base.begin() + 10 * d, base.begin() + 11 * d, base.begin() + 600 * d);
    std::copy(base.begin() + 10 * d, base.begin() + 11 * d, base.begin() + 999 * d);
    for (const std::size_t num_queries : {std::size_t{21}, std::size_t{77}}) {
      std::vector<float> queries =
          clustered_vectors(num_queries, d, 12, static_cast<std::uint32_t>(d + 1000));
      // One query is a stored row, so that its duplicates rank first.
      std::copy(base.begin() + 10 * d, base.begin() + 11 * d, queries.begin() + 3 * d);
      for (const detail::FlatSearchKernel kernel : available_kernels()) {
        for (const std::size_t k : {std::size_t{1}, std::size_t{16}}) {
          check_search(kernel, base, queries, d, k);
        }
      }
    }
  }
}

TEST_CASE("flat block search pads when k exceeds the base", "[flat][kernel]") {
  const std::size_t d = 7;
  for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{13}}) {
    const std::vector<float> base = clustered_vectors(n, d, 3, 5);
    const std::vector<float> queries = clustered_vectors(33, d, 3, 6);
    for (const detail::FlatSearchKernel kernel : available_kernels()) {
      check_search(kernel, base, queries, d, n + 4);
    }
  }
}

TEST_CASE("flat block search with d = 1 ranks ties by row", "[flat][kernel]") {
  // Unit vectors in one dimension are +1 or -1: every score is exactly +1
  // or -1, so the whole ranking is decided by the tie rule.
  const std::size_t n = 301;
  std::vector<float> base(n);
  for (std::size_t i = 0; i < n; ++i) base[i] = (i * 7) % 3 == 0 ? 1.0f : -1.0f;
  const std::vector<float> queries{1.0f,  -1.0f, 1.0f,  1.0f,  -1.0f, 1.0f,  -1.0f, 1.0f,  1.0f,
                                   -1.0f, 1.0f,  1.0f,  -1.0f, 1.0f,  -1.0f, 1.0f,  1.0f,  -1.0f,
                                   1.0f,  1.0f,  -1.0f, 1.0f,  -1.0f, 1.0f,  1.0f,  -1.0f, 1.0f,
                                   1.0f,  -1.0f, 1.0f,  -1.0f, 1.0f,  1.0f,  -1.0f, 1.0f};
  const std::size_t k = 40;
  for (const detail::FlatSearchKernel kernel : available_kernels()) {
    INFO(kernel_name(kernel));
    std::vector<float> scores(queries.size() * k);
    std::vector<std::int64_t> labels(queries.size() * k);
    detail::flat_block_search(base.data(), n, 1, queries.data(), queries.size(), k, scores.data(),
                              labels.data(), kernel);
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const auto ranked = reference_ranking(base, 1, &queries[q]);
      for (std::size_t r = 0; r < k; ++r) {
        INFO("query " << q << " rank " << r);
        CHECK(labels[q * k + r] == ranked[r].second);
        CHECK(scores[q * k + r] == static_cast<float>(ranked[r].first));
      }
    }
  }
}
