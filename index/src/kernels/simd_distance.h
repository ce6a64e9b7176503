// Vectorised inner products for the vector index (private to winnow_index;
// the part other libraries use is public in winnow/index/exact_scores.h).
//
// Debian's FAISS 1.7.3 is built for generic x86-64, so its distance kernels are
// scalar code. winnow computes the distances on its own hot paths (HNSW graph
// construction and search, flat search of small query batches) with the kernel
// chosen here: AVX2+FMA when the CPU has them, a portable unrolled loop
// otherwise. The choice is made once, at the first call, from
// __builtin_cpu_supports; the library itself is compiled for the baseline ISA.
#pragma once

#include <cstddef>

#include "winnow/index/exact_scores.h"  // inner_product, inner_products_many, first_above

namespace winnow::index {

// Signature shared by every inner-product kernel.
using InnerProductKernel = float (*)(const float* a, const float* b, std::size_t d);

// The portable kernel (four independent accumulators; any CPU).
float inner_product_portable(const float* a, const float* b, std::size_t d);

// The kernel inner_product() dispatches to; hold it in tight loops.
InnerProductKernel inner_product_kernel();

// Name of the kernel in use: "avx2+fma" or "portable".
const char* inner_product_isa();

// out[i] = <query, base + i*d> for i in [0, n).
void inner_products(const float* query, const float* base, std::size_t n, std::size_t d,
                    float* out);

}  // namespace winnow::index
