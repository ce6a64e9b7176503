#include "winnow/index/ivf_vector_index.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <utility>

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/Heap.h>

#include "faiss/id_map.h"
#include "io/payload_codec.h"
#include "ivf/cell_directory.h"
#include "ivf/heap_pages.h"
#include "kernels/simd_distance.h"
#include "winnow/error.h"
#include "winnow/index/coarse_clusters.h"

namespace winnow::index {
namespace {

using faiss_idx_t = faiss::Index::idx_t;
using TopK = faiss::CMin<float, faiss_idx_t>;  // keeps the k largest similarities

constexpr std::size_t kMaxDim = 1u << 16;
constexpr int kMaxNprobe = 1 << 20;
constexpr int kMaxCellScale = 1 << 20;
// Spherical 2-means of a cell being split: few iterations suffice for two
// centroids, and a fixed seed makes the split a function of the cell alone.
constexpr int kSplitIterations = 10;
constexpr int kSplitSeed = 1234;
// Queries (or inserted vectors) whose centroid scores are computed together.
constexpr std::size_t kQueryBlock = 32;
// Groups of centroids whose cells a query's cells are chosen from, once the
// cells are grouped (CellDirectory).
constexpr std::size_t kGroupProbe = 8;

void check_dim(std::size_t dim) {
  WINNOW_THROW_IF_NOT(dim >= 1 && dim <= kMaxDim, "index dimension must be in [1, {}], got {}",
                      kMaxDim, dim);
}

// An IndexIVFFlat with one cell (centroid 0) and array inverted lists:
// faiss::write_index can store it, and its lists can grow one at a time.
// The vector count past which a cell is split, for an index holding n rows.
std::size_t split_threshold_for(const IvfParams& params, std::size_t n) {
  const double scaled = params.cell_scale / 100.0 * std::sqrt(static_cast<double>(n));
  const std::size_t threshold = std::max(kMinCellSplit, static_cast<std::size_t>(scaled));
  return params.cell_cap > 0 ? std::min(threshold, static_cast<std::size_t>(params.cell_cap))
                             : threshold;
}

// The capacity a cell of `size` elements grows to when it needs room for
// `unit` more: an eighth more instead of std::vector's doubling. The cells
// hold nearly all of the index's bytes, and doubling leaves about a quarter
// of them allocated but unused (RSS that grows with the store, issue 16).
// Each element is copied about eight more times over the cell's life, which
// costs far less than a search.
std::size_t grown_capacity(std::size_t size, std::size_t unit) {
  return size + std::max(size / 8, 16 * unit);
}

template <typename T>
void reserve_one_more(std::vector<T>& cell, std::size_t unit = 1) {
  if (cell.size() + unit <= cell.capacity()) return;
  cell.reserve(grown_capacity(cell.size(), unit));
}

std::unique_ptr<faiss::IndexIVFFlat> make_ivf(std::size_t dim) {
  auto* quantizer = new faiss::IndexFlatIP(static_cast<faiss_idx_t>(dim));
  const std::vector<float> zero(dim, 0.0f);
  quantizer->add(1, zero.data());
  auto index =
      std::make_unique<faiss::IndexIVFFlat>(quantizer, dim, 1, faiss::METRIC_INNER_PRODUCT);
  index->own_fields = true;
  index->is_trained = true;
  return index;
}

}  // namespace

void validate_ivf_params(const IvfParams& params) {
  WINNOW_THROW_IF_NOT(params.nprobe >= 1 && params.nprobe <= kMaxNprobe,
                      "IVF parameter nprobe must be in [1, {}], got {}", kMaxNprobe, params.nprobe);
  WINNOW_THROW_IF_NOT(params.cell_scale >= 1 && params.cell_scale <= kMaxCellScale,
                      "IVF parameter cellScale must be in [1, {}], got {}", kMaxCellScale,
                      params.cell_scale);
  WINNOW_THROW_IF_NOT(
      params.cell_cap == 0 || (params.cell_cap >= kMinCellCap && params.cell_cap <= kMaxCellScale),
      "IVF parameter cellCap must be 0 (no cap) or in [{}, {}], got {}", kMinCellCap, kMaxCellScale,
      params.cell_cap);
  WINNOW_THROW_IF_NOT(params.shared_scan_from >= 1,
                      "IVF parameter sharedScanFrom must be at least 1, got {}",
                      params.shared_scan_from);
}

std::string ivf_config_string(const IvfParams& params) {
  std::string out = fmt::format("ivf(nprobe={},cellScale={},cellCap={}", params.nprobe,
                                params.cell_scale, params.cell_cap);
  // Named only when set, so that configs stored before it existed stay canonical.
  if (params.shared_scan_from != IvfParams{}.shared_scan_from) {
    out += fmt::format(",sharedScanFrom={}", params.shared_scan_from);
  }
  return out + ")";
}

struct IvfVectorIndex::Impl {
  Impl(std::size_t d, const IvfParams& p)
      : params(p), index(make_ivf(d)), directory(d), block_owner(1, std::this_thread::get_id()) {}

  std::size_t dim() const { return static_cast<std::size_t>(index->d); }
  std::size_t cells() const { return index->nlist; }
  faiss::ArrayInvertedLists& lists() {
    return *static_cast<faiss::ArrayInvertedLists*>(index->invlists);
  }
  const faiss::ArrayInvertedLists& lists() const {
    return *static_cast<const faiss::ArrayInvertedLists*>(index->invlists);
  }
  const float* centroids() const {
    return static_cast<const faiss::IndexFlat*>(index->quantizer)->get_xb();
  }
  float* centroid(std::size_t cell) {
    return static_cast<faiss::IndexFlat*>(index->quantizer)->get_xb() + cell * dim();
  }
  std::size_t cell_size(std::size_t cell) const { return lists().ids[cell].size(); }
  const float* cell_vectors(std::size_t cell) const {
    return reinterpret_cast<const float*>(lists().codes[cell].data());
  }

  // Row j of `scores` (cells() values) = the centroid scores of vector j of
  // the m <= kQueryBlock contiguous vectors at `vectors`, scored together.
  void score_centroids(const float* vectors, std::size_t m, std::vector<float>& scores) const;
  // Row j of `chosen` (`want` <= cells() values) = the cells whose centroids
  // are most similar to vector j of the m <= kQueryBlock at `vectors`, best
  // first (ties: the lower cell); once the cells are grouped, among the
  // cells of the vector's kGroupProbe nearest groups.
  void nearest_cells(const float* vectors, std::size_t m, std::size_t want,
                     std::uint32_t* chosen) const;
  void split_oversized_cells();
  bool split(std::size_t cell);
  // Room in the cell's vectors' block for one more vector, grown as
  // reserve_one_more grows a block; the old block is left by leave_block.
  void reserve_one_more_vector(std::size_t cell);
  // Before the calling thread frees the cell's vectors' block and gives it one
  // of its own: the old block's pages released if another thread allocated it.
  void leave_block(std::size_t cell);

  IvfParams params;
  std::unique_ptr<faiss::IndexIVFFlat> index;
  detail::IdMap ids;
  // Per cell: a size below which it is not split again, set when a split
  // found no two groups (all members alike). Not persisted: at worst a
  // reopened index retries such a split once.
  std::vector<std::size_t> no_split_below;
  // Groups of the cells, with cell_cap from kDirectoryFrom cells on.
  detail::CellDirectory directory;
  // Per cell: the thread that allocated its vectors' block (the ids' blocks
  // hold no whole page). With several threads, insertions run on the pool's
  // thread or on the writer; a block one of them frees that the other
  // allocated has its pages released first (heap_pages.h).
  std::vector<std::thread::id> block_owner;
};

void IvfVectorIndex::Impl::score_centroids(const float* vectors, std::size_t m,
                                           std::vector<float>& scores) const {
  std::array<const float*, kQueryBlock> rows_in;
  std::array<float*, kQueryBlock> rows_out;
  scores.resize(m * cells());
  for (std::size_t j = 0; j < m; ++j) {
    rows_in[j] = vectors + j * dim();
    rows_out[j] = scores.data() + j * cells();
  }
  inner_products_many(rows_in.data(), m, centroids(), cells(), dim(), rows_out.data());
}

void IvfVectorIndex::Impl::nearest_cells(const float* vectors, std::size_t m, std::size_t want,
                                         std::uint32_t* chosen) const {
  std::vector<std::uint32_t> order;
  if (!directory.active()) {
    std::vector<float> scores;
    score_centroids(vectors, m, scores);
    order.resize(cells());
    for (std::size_t j = 0; j < m; ++j) {
      const float* s = scores.data() + j * cells();
      std::iota(order.begin(), order.end(), std::uint32_t{0});
      std::partial_sort(
          order.begin(), order.begin() + static_cast<std::ptrdiff_t>(want), order.end(),
          [&](std::uint32_t a, std::uint32_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
      std::copy_n(order.begin(), want, chosen + j * want);
    }
    return;
  }
  std::vector<std::vector<detail::CellDirectory::Candidate>> candidates;
  directory.candidate_cells(vectors, m, kGroupProbe, want, candidates);
  for (std::size_t j = 0; j < m; ++j) {
    auto& c = candidates[j];
    std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(want), c.end(),
                      [](const auto& a, const auto& b) {
                        return a.score > b.score || (a.score == b.score && a.cell < b.cell);
                      });
    for (std::size_t r = 0; r < want; ++r) chosen[j * want + r] = c[r].cell;
  }
}

void IvfVectorIndex::Impl::reserve_one_more_vector(std::size_t cell) {
  std::vector<std::uint8_t>& codes = lists().codes[cell];
  const std::size_t code_size = lists().code_size;
  if (codes.size() + code_size <= codes.capacity()) return;
  std::vector<std::uint8_t> grown;
  grown.reserve(grown_capacity(codes.size(), code_size));
  grown.assign(codes.begin(), codes.end());
  leave_block(cell);
  codes.swap(grown);
}

void IvfVectorIndex::Impl::leave_block(std::size_t cell) {
  const std::thread::id me = std::this_thread::get_id();
  if (block_owner[cell] != me) {
    std::vector<std::uint8_t>& codes = lists().codes[cell];
    detail::release_pages(codes.data(), codes.capacity());
  }
  block_owner[cell] = me;
}

// Splits every cell over the threshold for the current size, in cell order;
// the cells a split adds are checked in turn (a cell far over the threshold
// splits again). A capped index groups its cells once they are many.
void IvfVectorIndex::Impl::split_oversized_cells() {
  const std::size_t threshold = split_threshold_for(params, ids.internal_count());
  no_split_below.resize(cells(), 0);
  for (std::size_t cell = 0; cell < cells(); ++cell) {
    while (cell_size(cell) > threshold && cell_size(cell) >= no_split_below[cell]) {
      if (!split(cell)) {
        no_split_below[cell] = 2 * cell_size(cell);
        break;
      }
    }
  }
  if (directory.active()) {
    directory.split_oversized(centroids());
  } else if (params.cell_cap > 0 && cells() >= kDirectoryFrom) {
    directory.build(centroids(), cells());
  }
}

// Spherical 2-means over the cell's members (split_in_two: FAISS's k-means
// on one thread, not an OpenMP team beside the caller's). The members
// nearer the first centroid stay; the others move, in their order, to a new
// last cell. Returns false, changing nothing, when one side would be empty.
bool IvfVectorIndex::Impl::split(std::size_t cell) {
  const std::size_t d = dim();
  const std::size_t n = cell_size(cell);
  const TwoWaySplit halves = split_in_two(cell_vectors(cell), n, d, kSplitIterations, kSplitSeed);
  if (!halves.splits()) return false;
  const float* c0 = halves.centroids.data();
  const float* c1 = c0 + d;

  faiss::ArrayInvertedLists& l = lists();
  const std::size_t code_size = d * sizeof(float);
  std::vector<std::uint8_t> keep_codes, move_codes;
  std::vector<faiss_idx_t> keep_ids, move_ids;
  keep_codes.reserve((n - halves.seconds) * code_size);
  keep_ids.reserve(n - halves.seconds);
  move_codes.reserve(halves.seconds * code_size);
  move_ids.reserve(halves.seconds);
  for (std::size_t i = 0; i < n; ++i) {
    const bool moves = halves.second[i] != 0;
    const auto* code = reinterpret_cast<const std::uint8_t*>(cell_vectors(cell) + i * d);
    std::vector<std::uint8_t>& codes = moves ? move_codes : keep_codes;
    codes.insert(codes.end(), code, code + code_size);
    (moves ? move_ids : keep_ids).push_back(l.ids[cell][i]);
  }

  std::copy_n(c0, d, centroid(cell));
  index->quantizer->add(1, c1);
  for (auto* codes : {&keep_codes, &move_codes}) codes->shrink_to_fit();
  for (auto* cell_ids : {&keep_ids, &move_ids}) cell_ids->shrink_to_fit();
  leave_block(cell);
  block_owner.push_back(std::this_thread::get_id());
  l.codes[cell] = std::move(keep_codes);
  l.ids[cell] = std::move(keep_ids);
  l.codes.push_back(std::move(move_codes));
  l.ids.push_back(std::move(move_ids));
  l.nlist += 1;
  index->nlist += 1;
  no_split_below.push_back(0);
  if (directory.active()) {
    directory.place(cell, centroids());
    directory.place(cells() - 1, centroids());
  }
  return true;
}

IvfVectorIndex::IvfVectorIndex(std::size_t dim, IvfParams params) {
  check_dim(dim);
  validate_ivf_params(params);
  impl_ = std::make_unique<Impl>(dim, params);
}

IvfVectorIndex::IvfVectorIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

IvfVectorIndex::~IvfVectorIndex() = default;

std::string IvfVectorIndex::config() const {
  return ivf_config_string(impl_->params);
}
std::size_t IvfVectorIndex::dim() const {
  return impl_->dim();
}
std::size_t IvfVectorIndex::size() const {
  return impl_->ids.live_count();
}
bool IvfVectorIndex::contains(std::int64_t id) const {
  return impl_->ids.contains(id);
}
std::vector<std::int64_t> IvfVectorIndex::ids() const {
  return impl_->ids.live_external();
}
std::size_t IvfVectorIndex::tombstones() const {
  return impl_->ids.tombstone_count();
}
const IvfParams& IvfVectorIndex::params() const {
  return impl_->params;
}
std::size_t IvfVectorIndex::cells() const {
  return impl_->cells();
}

std::size_t IvfVectorIndex::queries_per_search() const {
  return size() >= static_cast<std::size_t>(impl_->params.shared_scan_from) ? kSharedScanQueries
                                                                            : 1;
}

// The group (or, before the cells are grouped, the cell) whose centroid is
// most similar to the query: a query's probed cells lie around it. The
// queries need no normalising, since a positive scale keeps the argmax.
std::vector<std::uint32_t> IvfVectorIndex::locality_keys(std::size_t num_queries,
                                                         const float* queries) const {
  if (impl_->cells() < 2) return {};
  std::vector<std::uint32_t> keys(num_queries);
  const std::size_t d = dim();
  if (impl_->directory.active()) {
    for (std::size_t q = 0; q < num_queries; ++q) {
      keys[q] = impl_->directory.nearest_group_of(queries + q * d);
    }
    return keys;
  }
  for (std::size_t start = 0; start < num_queries; start += kQueryBlock) {
    const std::size_t m = std::min(kQueryBlock, num_queries - start);
    impl_->nearest_cells(queries + start * d, m, 1, keys.data() + start);
  }
  return keys;
}

void IvfVectorIndex::set_search_params(const IvfParams& wanted) {
  IvfParams next = impl_->params;
  next.nprobe = wanted.nprobe;
  next.shared_scan_from = wanted.shared_scan_from;
  validate_ivf_params(next);
  impl_->params = next;
}

void IvfVectorIndex::do_add(std::size_t n, const std::int64_t* ids, const float* normalized) {
  impl_->ids.check_new(n, ids);
  WINNOW_THROW_IF_NOT(n <= static_cast<std::size_t>(std::numeric_limits<faiss_idx_t>::max()) -
                               impl_->ids.internal_count(),
                      "IVF index cannot hold {} more vectors", n);
  const std::size_t d = dim();
  const auto first = static_cast<faiss_idx_t>(impl_->ids.internal_count());
  // Cells split only after the whole call, so every vector's nearest cell is
  // chosen among the same centroids: scored a block of vectors at a time.
  std::array<std::uint32_t, kQueryBlock> nearest{};
  faiss::ArrayInvertedLists& lists = impl_->lists();
  for (std::size_t start = 0; start < n; start += kQueryBlock) {
    const std::size_t m = std::min(kQueryBlock, n - start);
    impl_->nearest_cells(normalized + start * d, m, 1, nearest.data());
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t cell = nearest[j];
      reserve_one_more(lists.ids[cell]);
      impl_->reserve_one_more_vector(cell);
      lists.add_entry(cell, first + static_cast<faiss_idx_t>(start + j),
                      reinterpret_cast<const std::uint8_t*>(normalized + (start + j) * d));
    }
  }
  impl_->ids.append(n, ids);
  impl_->index->ntotal = static_cast<faiss_idx_t>(impl_->ids.internal_count());
  impl_->split_oversized_cells();
}

// Each query scans its nprobe cells in increasing cell order, so its result
// is a function of the query and the index alone. The batch is scanned cell
// by cell: every query that probes a cell scans it while it is in cache,
// which at a million vectors divides the memory traffic (the cost of a
// search) by the number of queries sharing a cell.
SearchResults IvfVectorIndex::do_search(std::size_t num_queries, const float* normalized,
                                        std::size_t k) const {
  SearchResults out = SearchResults::padded(num_queries, k);
  if (impl_->ids.live_count() == 0) return out;

  const std::size_t d = dim();
  const std::size_t cells = impl_->cells();
  const std::size_t nprobe = std::min(cells, static_cast<std::size_t>(impl_->params.nprobe));

  // The nprobe cells with the most similar centroids (ties: lower cell),
  // gathered per cell: queries_of[first_query[c] .. first_query[c + 1]).
  std::vector<std::size_t> first_query(cells + 1, 0);
  std::vector<std::uint32_t> probes(num_queries * nprobe);
  for (std::size_t start = 0; start < num_queries; start += kQueryBlock) {
    const std::size_t m = std::min(kQueryBlock, num_queries - start);
    impl_->nearest_cells(normalized + start * d, m, nprobe, probes.data() + start * nprobe);
  }
  for (const std::uint32_t cell : probes) ++first_query[cell + 1];
  std::partial_sum(first_query.begin(), first_query.end(), first_query.begin());
  std::vector<std::uint32_t> queries_of(num_queries * nprobe);
  {
    std::vector<std::size_t> next(first_query.begin(), first_query.end() - 1);
    for (std::size_t q = 0; q < num_queries; ++q) {  // ascending q within each cell
      for (std::size_t p = 0; p < nprobe; ++p) {
        queries_of[next[probes[q * nprobe + p]]++] = static_cast<std::uint32_t>(q);
      }
    }
  }

  std::vector<float> similarities(num_queries * k);
  std::vector<faiss_idx_t> labels(num_queries * k);
  for (std::size_t q = 0; q < num_queries; ++q) {
    faiss::heap_heapify<TopK>(k, similarities.data() + q * k, labels.data() + q * k);
  }
  const bool has_dead = impl_->ids.tombstone_count() > 0;
  std::vector<float> scores;
  std::vector<const float*> block_queries(kQueryBlock);
  std::vector<float*> block_scores(kQueryBlock);
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const std::size_t sharing = first_query[cell + 1] - first_query[cell];
    if (sharing == 0) continue;
    const std::size_t members = impl_->cell_size(cell);
    const float* vectors = impl_->cell_vectors(cell);
    const faiss_idx_t* rows = impl_->lists().ids[cell].data();
    // Only grown: resizing down and up again would zero the scores each time.
    const std::size_t needed = std::min(kQueryBlock, sharing) * members;
    if (scores.size() < needed) scores.resize(needed);
    // The queries sharing this cell, a block at a time: the cell's vectors are
    // read once per four queries of a block.
    for (std::size_t start = first_query[cell]; start < first_query[cell + 1];
         start += kQueryBlock) {
      const std::size_t m = std::min(kQueryBlock, first_query[cell + 1] - start);
      for (std::size_t b = 0; b < m; ++b) {
        block_queries[b] = normalized + queries_of[start + b] * d;
        block_scores[b] = scores.data() + b * members;
      }
      inner_products_many(block_queries.data(), m, vectors, members, d, block_scores.data());
      for (std::size_t b = 0; b < m; ++b) {
        const std::size_t q = queries_of[start + b];
        float* top_sim = similarities.data() + q * k;
        faiss_idx_t* top_row = labels.data() + q * k;
        const float* query_scores = block_scores[b];
        // Strictly better than the k-th: on ties the row scanned first stays.
        for (std::size_t j = first_above(query_scores, 0, members, top_sim[0]); j < members;
             j = first_above(query_scores, j + 1, members, top_sim[0])) {
          if (!(has_dead && impl_->ids.is_dead(rows[j]))) {
            faiss::heap_replace_top<TopK>(k, top_sim, top_row, query_scores[j], rows[j]);
          }
        }
      }
    }
  }
  for (std::size_t q = 0; q < num_queries; ++q) {
    faiss::heap_reorder<TopK>(k, similarities.data() + q * k, labels.data() + q * k);
  }
  impl_->ids.collect_hits(labels.data(), similarities.data(), k, out);
  out.probes_per_query = nprobe;
  out.probes = std::move(probes);
  return out;
}

std::size_t IvfVectorIndex::do_remove(std::size_t n, const std::int64_t* ids) {
  return impl_->ids.tombstone_all(n, ids);
}

// Drops tombstoned rows from their cells and renumbers the rows after them
// down, as IdMap::erase does; cells and centroids stay as they are.
void IvfVectorIndex::compact() {
  detail::IdMap& map = impl_->ids;
  if (map.tombstone_count() == 0) return;
  std::vector<std::int64_t> dead;
  std::vector<faiss_idx_t> renumbered(map.internal_count());
  for (std::size_t row = 0; row < map.internal_count(); ++row) {
    renumbered[row] = static_cast<faiss_idx_t>(row - dead.size());
    if (map.is_dead(static_cast<std::int64_t>(row))) dead.push_back(static_cast<std::int64_t>(row));
  }
  const std::size_t code_size = dim() * sizeof(float);
  faiss::ArrayInvertedLists& l = impl_->lists();
  for (std::size_t cell = 0; cell < impl_->cells(); ++cell) {
    std::size_t kept = 0;
    for (std::size_t j = 0; j < l.ids[cell].size(); ++j) {
      const faiss_idx_t row = l.ids[cell][j];
      if (map.is_dead(row)) continue;
      l.ids[cell][kept] = renumbered[static_cast<std::size_t>(row)];
      std::copy_n(l.codes[cell].data() + j * code_size, code_size,
                  l.codes[cell].data() + kept * code_size);
      ++kept;
    }
    l.ids[cell].resize(kept);
    l.codes[cell].resize(kept * code_size);
  }
  map.erase(dead);
  impl_->index->ntotal = static_cast<faiss_idx_t>(map.internal_count());
}

std::size_t IvfVectorIndex::split_threshold(std::size_t n) const {
  return split_threshold_for(impl_->params, n);
}

namespace detail {

// A capped index adds its group centroids: u64 count, count x dim floats
// (0 before it has kDirectoryFrom cells).
void PayloadCodec::write_ivf(const IvfVectorIndex& index, ByteSink& out) {
  index.impl_->ids.write(out);
  write_faiss(*index.impl_->index, out);
  if (index.impl_->params.cell_cap > 0) {
    const std::vector<float>& groups = index.impl_->directory.group_centroids();
    append_pod(out, static_cast<std::uint64_t>(groups.size() / index.dim()));
    append_bytes(out, groups.data(), groups.size() * sizeof(float));
  }
}

std::unique_ptr<VectorIndex> PayloadCodec::read_ivf(const IvfParams& params, std::size_t dim,
                                                    ByteReader& in) {
  check_dim(dim);
  validate_ivf_params(params);
  IdMap ids = IdMap::read(in);
  std::unique_ptr<faiss::Index> stored = read_faiss(in);
  auto* ivf = dynamic_cast<faiss::IndexIVFFlat*>(stored.get());
  WINNOW_THROW_IF_NOT(ivf != nullptr, "{}: FAISS data is not an IVF flat index", in.what());
  WINNOW_THROW_IF_NOT(static_cast<std::size_t>(ivf->d) == dim,
                      "{}: FAISS data has dimension {}, header says {}", in.what(), ivf->d, dim);
  WINNOW_THROW_IF_NOT(ivf->metric_type == faiss::METRIC_INNER_PRODUCT,
                      "{}: FAISS IVF data does not use inner product", in.what());
  auto* quantizer = dynamic_cast<faiss::IndexFlat*>(ivf->quantizer);
  auto* lists = dynamic_cast<faiss::ArrayInvertedLists*>(ivf->invlists);
  WINNOW_THROW_IF_NOT(
      quantizer != nullptr && lists != nullptr && ivf->own_fields && ivf->own_invlists,
      "{}: FAISS IVF data lacks a flat quantiser or array lists", in.what());
  const std::size_t cells = ivf->nlist;
  WINNOW_THROW_IF_NOT(cells >= 1 && quantizer->d == ivf->d &&
                          static_cast<std::size_t>(quantizer->ntotal) == cells &&
                          lists->nlist == cells && lists->ids.size() == cells &&
                          lists->codes.size() == cells && lists->code_size == dim * sizeof(float),
                      "{}: FAISS IVF data has {} cells but {} centroids and {} lists", in.what(),
                      cells, quantizer->ntotal, lists->nlist);
  // Every row of the id table in exactly one cell: a hostile or damaged file
  // must not make a search read past the id table.
  std::vector<bool> seen(ids.internal_count(), false);
  std::size_t rows = 0;
  for (std::size_t cell = 0; cell < cells; ++cell) {
    WINNOW_THROW_IF_NOT(lists->codes[cell].size() == lists->ids[cell].size() * lists->code_size,
                        "{}: IVF cell {} holds {} bytes for {} rows", in.what(), cell,
                        lists->codes[cell].size(), lists->ids[cell].size());
    for (const faiss_idx_t row : lists->ids[cell]) {
      WINNOW_THROW_IF_NOT(row >= 0 && static_cast<std::size_t>(row) < seen.size() &&
                              !seen[static_cast<std::size_t>(row)],
                          "{}: IVF cell {} holds row {}, which is out of range or repeated",
                          in.what(), cell, row);
      seen[static_cast<std::size_t>(row)] = true;
      ++rows;
    }
  }
  WINNOW_THROW_IF_NOT(rows == ids.internal_count(),
                      "{}: FAISS IVF data holds {} vectors, id table {}", in.what(), rows,
                      ids.internal_count());

  auto impl = std::make_unique<IvfVectorIndex::Impl>(dim, params);
  stored.release();
  impl->index.reset(ivf);
  impl->block_owner.assign(cells, std::this_thread::get_id());  // read on this thread
  impl->index->ntotal = static_cast<faiss_idx_t>(rows);
  impl->ids = std::move(ids);
  if (params.cell_cap > 0) {
    const auto groups = in.read<std::uint64_t>();
    const bool grouped = cells >= kDirectoryFrom;
    WINNOW_THROW_IF_NOT(grouped ? groups >= 1 && groups <= cells : groups == 0,
                        "{}: IVF data with {} cells has {} groups of cells", in.what(), cells,
                        groups);
    if (grouped) {
      std::vector<float> centroids(groups * dim);
      in.read_bytes(centroids.data(), centroids.size() * sizeof(float), "the group centroids");
      WINNOW_THROW_IF_NOT(
          std::all_of(centroids.begin(), centroids.end(), [](float v) { return std::isfinite(v); }),
          "{}: IVF group centroids hold a value that is not finite", in.what());
      impl->directory.restore(std::move(centroids), impl->centroids(), cells);
    }
  }
  return std::unique_ptr<VectorIndex>(new IvfVectorIndex(std::move(impl)));
}

}  // namespace detail
}  // namespace winnow::index
