// Approximate vector index: an inverted file (IVF) of cells, each a centroid
// and the vectors nearest to it, held as a FAISS IndexIVFFlat (inner product,
// L2-normalised vectors) with winnow's id map and vectorised kernels.
//
// The cells grow with the data instead of being trained once: the index
// starts as one cell (exact search), and a cell that holds more than
// max(kMinCellSplit, cellScale/100 * sqrt(n)) vectors (n = vectors held) is
// split in two by spherical 2-means over its own members. So the number of
// cells grows like sqrt(n), the work of a search (score every centroid, scan
// the nprobe best cells) grows like sqrt(n) instead of n, an insertion costs
// one centroid scan plus an amortised share of the splits, and nothing is ever
// retrained over the whole index (no pause that grows with the store).
// With cell_cap (the default) a cell also splits past cell_cap vectors, so
// that a search scans at most nprobe * cell_cap vectors at any size, and past
// kDirectoryFrom cells a query's cells are chosen among those of its nearest
// groups of centroids (cell_directory.h) instead of by scoring every centroid.
// A query scans the nprobe cells whose centroids are most similar to it; a
// near copy of a stored vector lands in its original's cell (or a neighbour
// among the nprobe), which is what keeps near-duplicate recall.
//
// Every result depends only on the order of add() calls, never on threads:
// insertion and splitting are sequential and seeded, and a query's result
// does not depend on the other queries of its batch.
// remove() tombstones rows (skipped by searches) until compact().
// Factory string: "ivf" or "ivf(nprobe=16,cellScale=100,cellCap=256)".
// Details: docs/index.md#ivf-cells-that-split-as-the-data-grows
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "winnow/index/vector_index.h"

namespace winnow::index {

namespace detail {
struct PayloadCodec;
}

// Defaults chosen by measurement (docs/benchmarks.md, "IVF").
struct IvfParams {
  int nprobe = 16;       // cells scanned per query (search time; raised to all cells if fewer)
  int cell_scale = 100;  // a cell splits past cell_scale/100 * sqrt(n) vectors
  // ... and past cell_cap vectors at any size (0: no cap). With a cap the
  // work of a search stops growing with n: a few groups of centroids are
  // scored (CellDirectory, from kDirectoryFrom cells on), then nprobe cells
  // of at most cell_cap vectors are scanned. Configs written before the cap
  // existed name cellScale without cellCap and mean cell_cap = 0.
  int cell_cap = 256;
  // From this many vectors a search call should hold kSharedScanQueries
  // queries (queries_per_search); a search-time knob like nprobe, named in
  // the config string only when not the default.
  int shared_scan_from = 1 << 17;
};

// Cells from which a capped index chooses a query's cells through groups of
// centroids rather than by scoring every centroid.
inline constexpr std::size_t kDirectoryFrom = 1024;

// A cell is never split below this many vectors (small indexes stay exact),
// unless cell_cap is lower.
inline constexpr std::size_t kMinCellSplit = 256;
inline constexpr int kMinCellCap = 16;

// From IvfParams::shared_scan_from vectors (default 2^17) an IVF index wants
// this many queries per search call (queries_per_search): it scans a call's
// queries cell by cell, so a query costs less in a large call, the more so
// the larger the index, on one thread and on two (docs/benchmarks.md, "IVF",
// search as the ingest runs it).
inline constexpr std::size_t kSharedScanQueries = 4096;

class IvfVectorIndex final : public VectorIndex {
 public:
  explicit IvfVectorIndex(std::size_t dim, IvfParams params = {});
  ~IvfVectorIndex() override;

  std::string type() const override { return "ivf"; }
  std::string config() const override;
  std::size_t dim() const override;
  std::size_t size() const override;
  bool contains(std::int64_t id) const override;
  std::vector<std::int64_t> ids() const override;
  std::size_t tombstones() const override;
  bool per_query_results() const override { return true; }
  std::size_t queries_per_search() const override;
  std::vector<std::uint32_t> locality_keys(std::size_t num_queries,
                                           const float* queries) const override;
  void compact() override;

  const IvfParams& params() const;
  // Number of cells (1 until the first split).
  std::size_t cells() const;
  // The vector count past which a cell is split, for an index holding n.
  std::size_t split_threshold(std::size_t n) const;
  // Takes the search-time knobs of `wanted` (nprobe, shared_scan_from) for
  // later searches (part of config()); the cells' shape (cell_scale,
  // cell_cap) stays.
  void set_search_params(const IvfParams& wanted);

 private:
  struct Impl;
  explicit IvfVectorIndex(std::unique_ptr<Impl> impl);

  void do_add(std::size_t n, const std::int64_t* ids, const float* normalized) override;
  SearchResults do_search(std::size_t num_queries, const float* normalized,
                          std::size_t k) const override;
  std::size_t do_remove(std::size_t n, const std::int64_t* ids) override;

  friend struct detail::PayloadCodec;
  std::unique_ptr<Impl> impl_;
};

// Throws winnow::Error naming the bad field unless nprobe >= 1,
// cell_scale >= 1, cell_cap is 0 or >= kMinCellCap and shared_scan_from >= 1
// (none absurdly large).
void validate_ivf_params(const IvfParams& params);
// "ivf(nprobe=16,cellScale=100,cellCap=256)", with ",sharedScanFrom=N" when
// not the default.
std::string ivf_config_string(const IvfParams& params);

}  // namespace winnow::index
