// Exact inner-product scores, for code outside the index that scores vectors
// itself and must agree bit for bit with the index (the ingest's fold-in of a
// batch's own records, its prior-neighbour merge).
//
// The kernel is chosen once, at the first call: AVX2+FMA when the CPU has
// them, a portable unrolled loop otherwise (details: docs/index.md). Every
// function here scores with that one kernel, so a pair of vectors gets the
// same float whichever function scores it, and the same float the index's
// flat, HNSW and IVF search and prior_neighbours compute for it.
#pragma once

#include <cstddef>

namespace winnow::index {

// Inner product of two d-dimensional vectors with the best kernel for this CPU.
float inner_product(const float* a, const float* b, std::size_t d);

// out[j][i] = <queries[j], base + i*d> for j in [0, m), i in [0, n). Every
// value is bit-identical to inner_product(queries[j], base + i*d, d), so a
// query's scores never depend on the queries scanned beside it; the AVX2
// path reads each base vector once for four queries.
void inner_products_many(const float* const* queries, std::size_t m, const float* base,
                         std::size_t n, std::size_t d, float* const* out);

// The first i in [from, n) with scores[i] > threshold, or n if none (NaN
// scores never pass). Scans eight scores per step: in a top-k scan almost
// no score beats the k-th best, and this is the test it repeats.
std::size_t first_above(const float* scores, std::size_t from, std::size_t n, float threshold);

}  // namespace winnow::index
