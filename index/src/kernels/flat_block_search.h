// Exact k-nearest-neighbour search of a batch of queries against a flat array
// of vectors by inner product (private to winnow_index). winnow's own because
// FAISS's IndexFlat::search pushes every score through a scalar heap, which
// cost as much as the sgemm itself. Two kernels give the same top-k up to the
// last bits: fused AVX-512 (scores stay in registers) where the CPU has it,
// else sgemm per block plus a SIMD scan against each query's k-th best.
// Details: docs/index.md#batched-flat-search
#pragma once

#include <cstddef>
#include <cstdint>

namespace winnow::index::detail {

enum class FlatSearchKernel {
  automatic,     // fused_avx512 where the CPU has AVX-512F, else sgemm
  sgemm,         // BLAS sgemm per block, then a SIMD scan of the scores
  fused_avx512,  // only where fused_avx512_available()
};

// Whether this CPU can run FlatSearchKernel::fused_avx512.
bool fused_avx512_available();

// For each of `num_queries` queries (row-major, num_queries x d), the k best
// rows of `base` (n x d): row numbers in `labels` and inner products in
// `scores` (num_queries x k each), best first; ties go to the lower row.
// Slots beyond n are -1 / -infinity. Throws winnow::Error when `kernel`
// is fused_avx512 and the CPU lacks AVX-512F.
void flat_block_search(const float* base, std::size_t n, std::size_t d, const float* queries,
                       std::size_t num_queries, std::size_t k, float* scores, std::int64_t* labels,
                       FlatSearchKernel kernel = FlatSearchKernel::automatic);

}  // namespace winnow::index::detail
