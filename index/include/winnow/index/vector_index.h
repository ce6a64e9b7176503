// VectorIndex: the abstract k-NN index over the store's int64 sample ids, by
// cosine similarity (vectors are L2-normalised on add and search; the caller's
// arrays are untouched). It knows nothing about the store; implementations are
// usually made by make_vector_index() and persisted by vector_index_io.h.
// Errors: input is validated first; winnow::Error leaves the index unchanged.
// Threads: const calls may run concurrently; add/remove/compact are exclusive.
// Details: docs/index.md#semantics
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace winnow::index {

// Results of a batch of k-NN queries, row-major, one row of k per query.
// Rows are sorted by decreasing similarity. When fewer than k live vectors are
// found, the row is padded with id -1 and similarity -infinity.
struct SearchResults {
  std::size_t num_queries = 0;
  std::size_t k = 0;
  std::vector<std::int64_t> ids;
  std::vector<float> similarities;
  // From an index that scans cells (IVF): the cells each query scanned,
  // probes_per_query a query, best first (the first is the query's nearest
  // cell); empty otherwise. A caller holding vectors outside the index can
  // then score a vector only for the queries that scanned its cell, as the
  // index would (docs/ingest.md, "Order of decisions").
  std::size_t probes_per_query = 0;
  std::vector<std::uint32_t> probes;

  std::int64_t id(std::size_t query, std::size_t rank) const { return ids[query * k + rank]; }
  float similarity(std::size_t query, std::size_t rank) const {
    return similarities[query * k + rank];
  }
  // Number of real (non-padding) results in a query's row.
  std::size_t count(std::size_t query) const;
  // Results with every slot padding (id -1, similarity -inf), to be filled.
  static SearchResults padded(std::size_t num_queries, std::size_t k);
  // Appends the rows of `more` (results of later queries, the same k) after
  // these: how a batch searched in parts is put back together. The probes
  // are kept when both have them (or these hold no rows yet).
  void append(const SearchResults& more);
  // Rows [first, first + count) as results of their own, with their probes.
  SearchResults rows(std::size_t first, std::size_t count) const;
  // Row `row` set to row `from_row` of `from` (the same k), and its probes
  // when both hold them, as many a query: how a batch searched in parts in
  // another order is put back together.
  void set_row(std::size_t row, const SearchResults& from, std::size_t from_row);
  // Row by row, the best k of `a` and `b` (results of the same queries in two
  // indexes holding different ids), best first, ties to the lower id.
  static SearchResults merged(const SearchResults& a, const SearchResults& b, std::size_t k);
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  // "flat", "hnsw" or "ivf".
  virtual std::string type() const = 0;
  // Canonical factory string, e.g. "hnsw(M=24,efConstruction=80,efSearch=128)";
  // make_vector_index(config(), dim()) makes an empty index of the same kind.
  virtual std::string config() const = 0;
  virtual std::size_t dim() const = 0;
  // Number of live (searchable) vectors.
  virtual std::size_t size() const = 0;
  virtual bool contains(std::int64_t id) const = 0;
  // Live ids in insertion order.
  virtual std::vector<std::int64_t> ids() const = 0;
  // Removed vectors still held by the index (HNSW tombstones; 0 for flat).
  virtual std::size_t tombstones() const = 0;
  // Whether a query's results depend only on the index, never on the other
  // queries of its search() call, so a batch may be split across threads,
  // into calls of at least min_queries_per_call() queries each. Flat: only
  // with its fused AVX-512 kernel, whose every score is one FMA chain over
  // the dimensions whatever the batch, and for calls of at least 20 queries
  // (fewer take another kernel); with BLAS sgemm, rounding depends on the
  // batch's size.
  virtual bool per_query_results() const { return false; }
  virtual std::size_t min_queries_per_call() const { return 1; }
  // How many queries a search() call should hold for each of them to cost
  // least: an index that reads its data once for all of a call's queries
  // (IVF, cell by cell) wants many once that data outgrows the caches; 1
  // when a call's size makes no difference worth having.
  virtual std::size_t queries_per_search() const { return 1; }
  // For a batch of queries split across threads (per_query_results): a key
  // per query (row-major, num_queries * dim(), any length) such that queries
  // with the same key read much the same part of the index (IVF: the group
  // of cells nearest to the query). Each thread then takes queries of a few
  // keys and reads its own part, instead of every thread reading the whole
  // index for a share of the queries. Empty when the index has no such parts.
  virtual std::vector<std::uint32_t> locality_keys(std::size_t num_queries,
                                                   const float* queries) const {
    (void)num_queries, (void)queries;
    return {};
  }

  // Adds n vectors (row-major, n * dim() floats) under the given ids. Throws
  // if an id is already present or repeated in the batch; nothing is added
  // then.
  void add(std::size_t n, const std::int64_t* ids, const float* vectors);
  void add(const std::vector<std::int64_t>& ids, const std::vector<float>& vectors);

  // k nearest live vectors of each query (row-major, num_queries * dim()).
  SearchResults search(std::size_t num_queries, const float* queries, int k) const;
  SearchResults search(const std::vector<float>& queries, int k) const;

  // Removes the given ids; ids not in the index are ignored. Returns how many
  // were removed. Flat indexes free the rows; HNSW marks them as tombstones,
  // which searches skip, until compact().
  std::size_t remove(std::size_t n, const std::int64_t* ids);
  std::size_t remove(const std::vector<std::int64_t>& ids);

  // Drops tombstoned vectors for good (HNSW: rebuilds the graph from the live
  // vectors). A no-op for indexes without tombstones.
  virtual void compact() = 0;

 protected:
  VectorIndex() = default;

  // For an index made of other indexes (AutoVectorIndex): calls a part's
  // implementation with input already validated and L2-normalised, so the
  // part sees exactly the vectors it would have seen called directly
  // (normalising twice can change the last bit).
  static void add_normalized(VectorIndex& part, std::size_t n, const std::int64_t* ids,
                             const float* normalized) {
    part.do_add(n, ids, normalized);
  }
  static SearchResults search_normalized(const VectorIndex& part, std::size_t num_queries,
                                         const float* normalized, std::size_t k) {
    return part.do_search(num_queries, normalized, k);
  }

 private:
  // Called with validated, L2-normalised vectors; ids may still collide with
  // existing ones (the implementation checks before changing anything).
  virtual void do_add(std::size_t n, const std::int64_t* ids, const float* normalized) = 0;
  // Called with validated, L2-normalised queries and k > 0.
  virtual SearchResults do_search(std::size_t num_queries, const float* normalized,
                                  std::size_t k) const = 0;
  virtual std::size_t do_remove(std::size_t n, const std::int64_t* ids) = 0;
};

// Threads FAISS may use inside one call (OpenMP: HNSW insertion and the
// search of many queries) from the calling thread on; >= 1.
void set_index_threads(int threads);

}  // namespace winnow::index
