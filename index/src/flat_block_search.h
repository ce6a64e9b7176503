// Exact k-nearest-neighbour search of a batch of queries against a flat
// array of vectors by inner product (private to winnow_index).
//
// The base is cut into blocks of rows; one sgemm per (query block, base
// block) computes every inner product, and each query's row of scores is
// then scanned with a SIMD compare against the current k-th best score, so
// only the few scores that beat it touch the query's heap. FAISS's
// IndexFlat::search also uses sgemm, but pushes every score through a
// scalar heap comparison, which cost as much as the sgemm itself in the
// ingest pipeline's profile.
#pragma once

#include <cstddef>
#include <cstdint>

namespace winnow::index::detail {

// For each of `num_queries` queries (row-major, num_queries x d), the k best
// rows of `base` (n x d): row numbers in `labels` and inner products in
// `scores` (num_queries x k each), best first; ties go to the lower row.
// Slots beyond n are -1 / -infinity.
void flat_block_search(const float* base, std::size_t n, std::size_t d, const float* queries,
                       std::size_t num_queries, std::size_t k, float* scores,
                       std::int64_t* labels);

}  // namespace winnow::index::detail
