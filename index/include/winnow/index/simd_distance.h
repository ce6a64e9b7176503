// Vectorised inner products for the vector index.
//
// Debian's FAISS 1.7.3 is built for generic x86-64, so its distance kernels are
// scalar code. winnow computes the distances on its own hot paths (HNSW graph
// construction and search, flat search of small query batches) with the kernel
// chosen here: AVX2+FMA when the CPU has them, a portable unrolled loop
// otherwise. The choice is made once, at the first call, from
// __builtin_cpu_supports; the library itself is compiled for the baseline ISA.
#pragma once

#include <cstddef>

namespace winnow::index {

// Signature shared by every inner-product kernel.
using InnerProductKernel = float (*)(const float* a, const float* b, std::size_t d);

// Inner product of two d-dimensional vectors with the best kernel for this CPU.
float inner_product(const float* a, const float* b, std::size_t d);

// The portable kernel (four independent accumulators; any CPU).
float inner_product_portable(const float* a, const float* b, std::size_t d);

// The kernel inner_product() dispatches to; hold it in tight loops.
InnerProductKernel inner_product_kernel();

// Name of the kernel in use: "avx2+fma" or "portable".
const char* inner_product_isa();

// out[i] = <query, base + i*d> for i in [0, n).
void inner_products(const float* query, const float* base, std::size_t n, std::size_t d,
                    float* out);

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
