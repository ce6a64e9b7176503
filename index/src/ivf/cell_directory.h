// Groups of an IVF index's cells by their centroids (private to
// winnow_index), so that choosing a query's cells scores a few hundred
// centroids instead of every one. With IvfParams::cell_cap the cells stop
// growing, so their number grows like n; without groups, scoring every
// centroid would become the search's main cost.
//
// Each group has a centroid, and a cell always belongs to the group whose
// centroid is most similar to the cell's own (ties: the lower group). So the
// members are a function of the two sets of centroids: an index reloaded
// with its saved group centroids (IvfVectorIndex's payload) chooses exactly
// the cells the saved one chose. A group holding more than
// max(kMinGroupSplit, sqrt(cells)) cells is split in two by spherical 2-means
// over its members' centroids, as a cell is over its vectors.
// Details: docs/index.md#ivf-cells-that-split-as-the-data-grows
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::index::detail {

class CellDirectory {
 public:
  // A group is never split below this many cells.
  static constexpr std::size_t kMinGroupSplit = 64;

  // A candidate cell of a query and the similarity of its centroid.
  struct Candidate {
    float score;
    std::uint32_t cell;
  };

  explicit CellDirectory(std::size_t dim) : dim_(dim) {}

  // Whether there are groups (none until build() or restore()).
  bool active() const { return !group_centroids_.empty(); }
  std::size_t groups() const { return groups_.size(); }
  // groups() x dim values: what a saved index keeps.
  const std::vector<float>& group_centroids() const { return group_centroids_; }

  // One group holding every cell, split until none is over the threshold.
  void build(const float* centroids, std::size_t cells);
  // The groups of a saved index: `group_centroids` as group_centroids()
  // returned them, every cell placed in its group.
  void restore(std::vector<float> group_centroids, const float* centroids, std::size_t cells);
  // Cell `cell` (at most one past the last placed) has a new centroid, or is
  // new: it moves to, or joins, its group. Call split_oversized() after.
  void place(std::size_t cell, const float* centroids);
  // Splits the groups over the threshold for the current number of cells.
  void split_oversized(const float* centroids);

  // The group whose centroid is most similar to `query` (ties: the lower).
  std::uint32_t nearest_group_of(const float* query) const { return nearest_group(query).first; }

  // For each of the m <= 32 query vectors (rows of `queries`), out[j] = the
  // cells of its `probe` most similar groups (ties: the lower group), and of
  // the next ones while fewer than `min_cells` cells are gathered, each with
  // its centroid's similarity to the query (bit-identical to
  // inner_product()), in no particular order.
  void candidate_cells(const float* queries, std::size_t m, std::size_t probe,
                       std::size_t min_cells, std::vector<std::vector<Candidate>>& out) const;

 private:
  // A group's cells and a copy of their centroids, row i for cells[i], so
  // that a query scores a group's cells in one pass over contiguous memory.
  struct Group {
    std::vector<std::uint32_t> cells;
    std::vector<float> centroids;
    std::size_t no_split_below = 0;  // as for cells: a split found no two sides
  };

  std::size_t split_threshold() const;
  // The most similar group to `centroid` and its score.
  std::pair<std::uint32_t, float> nearest_group(const float* centroid) const;
  void join(std::size_t cell, const float* centroid, std::uint32_t group, float score);
  void leave(std::size_t cell);
  // Splits group g; returns false, changing nothing, when one side would be empty.
  bool split(std::uint32_t g, const float* centroids);

  std::size_t dim_;
  std::vector<float> group_centroids_;  // groups() x dim_
  std::vector<Group> groups_;
  std::vector<std::uint32_t> group_of_;  // per cell
  std::vector<std::uint32_t> row_of_;    // per cell: its row in its group
  std::vector<float> score_of_;          // per cell: with its group's centroid
};

}  // namespace winnow::index::detail
