#include "ivf/cell_directory.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/simd_distance.h"
#include "winnow/error.h"
#include "winnow/index/coarse_clusters.h"

namespace winnow::index::detail {
namespace {

constexpr int kSplitIterations = 10;
constexpr std::uint64_t kSplitSeed = 4321;
constexpr std::uint32_t kNoGroup = 0xffffffffu;
// Queries whose group scores are computed together.
constexpr std::size_t kQueryBlock = 32;

// Whether (score a, group ga) ranks before (score b, group gb): the higher
// score, on ties the lower group.
bool ranks_before(float a, std::uint32_t ga, float b, std::uint32_t gb) {
  return a > b || (a == b && ga < gb);
}

}  // namespace

std::size_t CellDirectory::split_threshold() const {
  const auto root = static_cast<std::size_t>(std::sqrt(static_cast<double>(group_of_.size())));
  return std::max(kMinGroupSplit, root);
}

std::pair<std::uint32_t, float> CellDirectory::nearest_group(const float* centroid) const {
  std::uint32_t best = kNoGroup;
  float best_score = 0.0f;
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    const float s = inner_product(group_centroids_.data() + g * dim_, centroid, dim_);
    if (best == kNoGroup || ranks_before(s, g, best_score, best)) best = g, best_score = s;
  }
  return {best, best_score};
}

void CellDirectory::join(std::size_t cell, const float* centroid, std::uint32_t group,
                         float score) {
  Group& g = groups_[group];
  group_of_[cell] = group;
  row_of_[cell] = static_cast<std::uint32_t>(g.cells.size());
  score_of_[cell] = score;
  g.cells.push_back(static_cast<std::uint32_t>(cell));
  g.centroids.insert(g.centroids.end(), centroid, centroid + dim_);
}

// The group's last cell takes the leaving one's row.
void CellDirectory::leave(std::size_t cell) {
  Group& g = groups_[group_of_[cell]];
  const std::uint32_t row = row_of_[cell];
  const std::uint32_t last = g.cells.back();
  g.cells[row] = last;
  row_of_[last] = row;
  std::copy_n(g.centroids.end() - static_cast<std::ptrdiff_t>(dim_), dim_,
              g.centroids.begin() + static_cast<std::ptrdiff_t>(row * dim_));
  g.cells.pop_back();
  g.centroids.resize(g.centroids.size() - dim_);
  group_of_[cell] = kNoGroup;
}

void CellDirectory::build(const float* centroids, std::size_t cells) {
  WINNOW_THROW_IF_NOT(cells >= 1, "a cell directory needs at least one cell");
  // One group whose centroid is the cells' mean direction.
  std::vector<float> mean(dim_, 0.0f);
  for (std::size_t c = 0; c < cells; ++c) {
    for (std::size_t i = 0; i < dim_; ++i) mean[i] += centroids[c * dim_ + i];
  }
  const float norm = std::sqrt(inner_product(mean.data(), mean.data(), dim_));
  if (norm > 0.0f) {
    for (float& v : mean) v /= norm;
  } else {
    std::copy_n(centroids, dim_, mean.begin());
  }
  restore(std::move(mean), centroids, cells);
  split_oversized(centroids);
}

void CellDirectory::restore(std::vector<float> group_centroids, const float* centroids,
                            std::size_t cells) {
  WINNOW_THROW_IF_NOT(!group_centroids.empty() && group_centroids.size() % dim_ == 0,
                      "cell directory: {} group centroid values for dimension {}",
                      group_centroids.size(), dim_);
  const std::size_t groups = group_centroids.size() / dim_;
  group_centroids_ = std::move(group_centroids);
  groups_.assign(groups, Group{});
  group_of_.clear();
  row_of_.clear();
  score_of_.clear();
  for (std::size_t c = 0; c < cells; ++c) place(c, centroids);
}

void CellDirectory::place(std::size_t cell, const float* centroids) {
  if (cell < group_of_.size()) {
    leave(cell);
  } else {
    WINNOW_THROW_IF_NOT(cell == group_of_.size(), "cell directory: cell {} placed after {} cells",
                        cell, group_of_.size());
    group_of_.push_back(kNoGroup);
    row_of_.push_back(0);
    score_of_.push_back(0.0f);
  }
  const float* centroid = centroids + cell * dim_;
  const auto [group, score] = nearest_group(centroid);
  join(cell, centroid, group, score);
}

void CellDirectory::split_oversized(const float* centroids) {
  const std::size_t threshold = split_threshold();
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    while (groups_[g].cells.size() > threshold &&
           groups_[g].cells.size() >= groups_[g].no_split_below) {
      const std::size_t before = groups_[g].cells.size();
      if (!split(g, centroids) || groups_[g].cells.size() >= before) {
        groups_[g].no_split_below = 2 * groups_[g].cells.size();
        break;
      }
    }
  }
}

// The members are taken in cell order, so that the split depends on the
// group's cells alone, not on the order they joined it in.
bool CellDirectory::split(std::uint32_t g, const float* centroids) {
  std::vector<std::uint32_t> cells = groups_[g].cells;
  std::sort(cells.begin(), cells.end());
  std::vector<float> x(cells.size() * dim_);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::copy_n(centroids + cells[i] * dim_, dim_, x.data() + i * dim_);
  }
  const TwoWaySplit two = split_in_two(x.data(), cells.size(), dim_, kSplitIterations, kSplitSeed);
  if (!two.splits()) return false;
  const float* c0 = two.centroids.data();
  const float* c1 = c0 + dim_;

  const auto added = static_cast<std::uint32_t>(groups_.size());
  std::copy_n(c0, dim_, group_centroids_.data() + g * dim_);
  group_centroids_.insert(group_centroids_.end(), c1, c1 + dim_);
  groups_.emplace_back();
  // Only groups g (moved) and `added` (new) changed: a cell of another group
  // stays there unless one of the two now ranks before it; g's own cells are
  // placed again among all groups.
  for (std::size_t cell = 0; cell < group_of_.size(); ++cell) {
    const float* c = centroids + cell * dim_;
    if (group_of_[cell] == g) {
      leave(cell);
      const auto [group, score] = nearest_group(c);
      join(cell, c, group, score);
      continue;
    }
    std::uint32_t best = group_of_[cell];
    float best_score = score_of_[cell];
    for (const std::uint32_t changed : {g, added}) {
      const float s = inner_product(group_centroids_.data() + changed * dim_, c, dim_);
      if (ranks_before(s, changed, best_score, best)) best = changed, best_score = s;
    }
    if (best != group_of_[cell]) {
      leave(cell);
      join(cell, c, best, best_score);
    }
  }
  return true;
}

// The queries probing a group score its cells together, the group's
// centroids read once per four of them (inner_products_many).
void CellDirectory::candidate_cells(const float* queries, std::size_t m, std::size_t probe,
                                    std::size_t min_cells,
                                    std::vector<std::vector<Candidate>>& out) const {
  WINNOW_THROW_IF_NOT(m <= kQueryBlock, "cell directory: {} queries in one block (at most {})", m,
                      kQueryBlock);
  const std::size_t groups = groups_.size();
  std::vector<float> scores(m * groups);
  const float* rows_in[kQueryBlock];
  float* rows_out[kQueryBlock];
  for (std::size_t j = 0; j < m; ++j) {
    rows_in[j] = queries + j * dim_;
    rows_out[j] = scores.data() + j * groups;
  }
  inner_products_many(rows_in, m, group_centroids_.data(), groups, dim_, rows_out);

  // The groups each query probes, then the queries of each group.
  std::vector<std::vector<std::uint32_t>> queries_of(groups);
  std::vector<std::uint32_t> order(groups);
  const std::size_t take = std::min(probe, groups);
  out.resize(std::max(out.size(), m));
  for (std::size_t j = 0; j < m; ++j) {
    const float* s = rows_out[j];
    const auto before = [&](std::uint32_t a, std::uint32_t b) {
      return ranks_before(s[a], a, s[b], b);
    };
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                      before);
    std::size_t cells = 0;
    for (std::size_t r = 0; r < groups && (r < take || cells < min_cells); ++r) {
      // Rarely (small or empty groups): more groups than `probe`, to reach min_cells.
      if (r == take)
        std::sort(order.begin() + static_cast<std::ptrdiff_t>(take), order.end(), before);
      queries_of[order[r]].push_back(static_cast<std::uint32_t>(j));
      cells += groups_[order[r]].cells.size();
    }
    out[j].clear();
    out[j].reserve(cells);
  }
  std::vector<float> cell_scores;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::vector<std::uint32_t>& probing = queries_of[g];
    const Group& group = groups_[g];
    const std::size_t n = group.cells.size();
    if (probing.empty() || n == 0) continue;
    cell_scores.resize(probing.size() * n);
    for (std::size_t b = 0; b < probing.size(); ++b) {
      rows_in[b] = queries + probing[b] * dim_;
      rows_out[b] = cell_scores.data() + b * n;
    }
    inner_products_many(rows_in, probing.size(), group.centroids.data(), n, dim_, rows_out);
    for (std::size_t b = 0; b < probing.size(); ++b) {
      std::vector<Candidate>& c = out[probing[b]];
      for (std::size_t i = 0; i < n; ++i) c.push_back({rows_out[b][i], group.cells[i]});
    }
  }
}

}  // namespace winnow::index::detail
