// The groups of IVF cells (index/src/cell_directory.h): a cell is always in
// the group whose centroid is most similar to its own, however the groups
// came to be, so a directory restored from its group centroids alone offers
// every query the same candidate cells as the one built step by step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "index_test_helpers.h"
#include "ivf/cell_directory.h"
#include "winnow/index/exact_scores.h"

using namespace winnow::index;
using namespace winnow::index::test;
using detail::CellDirectory;

namespace {

constexpr std::size_t kDim = 16;

// The candidate cells of each query, sorted by cell (their order is not part
// of the contract), checked against inner_product() on the way.
std::vector<std::vector<CellDirectory::Candidate>> sorted_candidates(
    const CellDirectory& directory, const std::vector<float>& queries,
    const std::vector<float>& centroids, std::size_t probe, std::size_t min_cells) {
  std::vector<std::vector<CellDirectory::Candidate>> all;
  const std::size_t n = queries.size() / kDim;
  for (std::size_t start = 0; start < n; start += 32) {
    const std::size_t m = std::min<std::size_t>(32, n - start);
    std::vector<std::vector<CellDirectory::Candidate>> block;
    directory.candidate_cells(queries.data() + start * kDim, m, probe, min_cells, block);
    for (std::size_t j = 0; j < m; ++j) {
      for (const CellDirectory::Candidate& c : block[j]) {
        CHECK(c.score == inner_product(queries.data() + (start + j) * kDim,
                                       centroids.data() + c.cell * kDim, kDim));
      }
      std::sort(block[j].begin(), block[j].end(),
                [](const auto& a, const auto& b) { return a.cell < b.cell; });
      all.push_back(std::move(block[j]));
    }
  }
  return all;
}

}  // namespace

TEST_CASE("a cell directory keeps each cell in its most similar group as cells come and move",
          "[ivf][directory]") {
  const std::size_t cells = 3000, first = 1200;
  std::vector<float> centroids = clustered_vectors(cells, kDim, 12, 41);
  const std::vector<float> moved = clustered_vectors(cells, kDim, 12, 43);
  const std::vector<float> queries = clustered_vectors(96, kDim, 12, 47);

  CellDirectory grown(kDim);
  grown.build(centroids.data(), first);
  REQUIRE(grown.groups() > 1);
  std::mt19937 rng(53);
  for (std::size_t cell = first; cell < cells; ++cell) {
    grown.place(cell, centroids.data());
    // Now and then an earlier cell's centroid changes, as when a cell splits.
    if (cell % 7 == 0) {
      const std::size_t earlier = rng() % cell;
      std::copy_n(moved.data() + earlier * kDim, kDim, centroids.data() + earlier * kDim);
      grown.place(earlier, centroids.data());
    }
    if (cell % 100 == 0) grown.split_oversized(centroids.data());
  }
  grown.split_oversized(centroids.data());
  CHECK(grown.groups() * CellDirectory::kMinGroupSplit >= cells / 2);

  CellDirectory restored(kDim);
  restored.restore(grown.group_centroids(), centroids.data(), cells);
  CHECK(restored.groups() == grown.groups());
  for (const std::size_t probe : {std::size_t{1}, std::size_t{4}}) {
    INFO("probe " << probe);
    const auto a = sorted_candidates(grown, queries, centroids, probe, 8);
    const auto b = sorted_candidates(restored, queries, centroids, probe, 8);
    REQUIRE(a.size() == b.size());
    for (std::size_t q = 0; q < a.size(); ++q) {
      CHECK(a[q].size() >= 8);
      REQUIRE(a[q].size() == b[q].size());
      for (std::size_t i = 0; i < a[q].size(); ++i) CHECK(a[q][i].cell == b[q][i].cell);
    }
  }
  // Probing every group offers every cell exactly once.
  const auto every = sorted_candidates(grown, queries, centroids, grown.groups(), 0);
  for (const auto& row : every) {
    REQUIRE(row.size() == cells);
    for (std::size_t i = 0; i < cells; ++i) CHECK(row[i].cell == i);
  }
}
