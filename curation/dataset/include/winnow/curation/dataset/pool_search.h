// A batch of queries searched on the pipeline's thread pool.
#pragma once

#include <cstddef>

#include "winnow/curation/core/thread_pool.h"
#include "winnow/index/vector_index.h"

namespace winnow::curation {

// The `n` vectors at `queries` searched for `k` neighbours each. An index
// whose per-query results do not depend on the rest of the batch (HNSW, IVF,
// flat with its AVX-512 kernel: VectorIndex::per_query_results) is searched
// in one block of rows per thread of the pool, each block at least the
// index's min_queries_per_call (rows grouped by the index's locality keys);
// any other in one call, since its float rounding could then differ with the
// number of threads. Either way the results are those of one call on one
// thread.
index::SearchResults search_on_pool(const ThreadPool& pool, const index::VectorIndex& index,
                                    std::size_t n, const float* queries, std::size_t k);

}  // namespace winnow::curation
