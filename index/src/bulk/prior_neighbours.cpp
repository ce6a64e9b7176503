#include "winnow/index/prior_neighbours.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/simd_distance.h"
#include "winnow/error.h"

namespace winnow::index {

namespace {

// Queries scored together: inner_products_many reads each earlier vector
// once for this many queries.
constexpr std::size_t kQueryGroup = 4;

}  // namespace

PriorNeighbourLists prior_neighbours(const float* vectors, const std::int64_t* positions,
                                     const std::uint8_t* wanted, std::size_t n, std::size_t d,
                                     std::size_t k) {
  WINNOW_THROW_IF_NOT(d > 0 && k > 0, "prior neighbours: dimension and k must be positive");
  for (std::size_t i = 0; i < n * d; ++i) {
    WINNOW_THROW_IF_NOT(std::isfinite(vectors[i]),
                        "prior neighbours: vector {} holds a value that is not finite", i / d);
  }
  // Rows in the order, and the vectors copied in that order: a row's earlier
  // vectors are then a prefix.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
  std::vector<float> sorted(n * d);
  for (std::size_t s = 0; s < n; ++s) {
    if (s > 0) {
      WINNOW_THROW_IF_NOT(positions[order[s]] != positions[order[s - 1]],
                          "prior neighbours: position {} is given twice", positions[order[s]]);
    }
    std::copy_n(vectors + order[s] * d, d, sorted.data() + s * d);
  }
  std::vector<std::size_t> output_row(n, 0);  // input row -> row of the result
  std::size_t rows = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (wanted[i]) output_row[i] = rows++;
  }
  PriorNeighbourLists lists;
  lists.k = k;
  lists.positions.assign(rows * k, -1);
  lists.similarities.assign(rows * k, -std::numeric_limits<float>::infinity());
  lists.complete.assign(rows, 0);

  std::vector<std::size_t> group;  // sorted places of the wanted rows being scored
  std::vector<std::vector<float>> scores(kQueryGroup);
  std::vector<std::size_t> candidates;
  const auto answer_group = [&] {
    const std::size_t scanned = group.back();  // the group's last query sees most
    const float* queries[kQueryGroup];
    float* out[kQueryGroup];
    for (std::size_t q = 0; q < group.size(); ++q) {
      queries[q] = sorted.data() + group[q] * d;
      scores[q].resize(scanned);
      out[q] = scores[q].data();
    }
    inner_products_many(queries, group.size(), sorted.data(), scanned, d, out);
    for (std::size_t q = 0; q < group.size(); ++q) {
      const std::size_t earlier = group[q];  // sorted places 0 .. earlier-1
      const std::size_t keep = std::min(earlier, k);
      candidates.resize(earlier);
      std::iota(candidates.begin(), candidates.end(), std::size_t{0});
      const float* s = scores[q].data();
      std::partial_sort(
          candidates.begin(), candidates.begin() + keep, candidates.end(),
          [s](std::size_t a, std::size_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
      const std::size_t row = output_row[order[group[q]]];
      for (std::size_t r = 0; r < keep; ++r) {
        lists.positions[row * k + r] = positions[order[candidates[r]]];
        lists.similarities[row * k + r] = s[candidates[r]];
      }
      lists.complete[row] = earlier <= k ? 1 : 0;
    }
    group.clear();
  };
  for (std::size_t s = 0; s < n; ++s) {
    if (!wanted[order[s]]) continue;
    group.push_back(s);
    if (group.size() == kQueryGroup) answer_group();
  }
  if (!group.empty()) answer_group();
  return lists;
}

}  // namespace winnow::index
