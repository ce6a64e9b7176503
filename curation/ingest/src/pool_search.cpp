#include "pool_search.h"

#include <algorithm>
#include <vector>

namespace winnow::curation::ingest {

index::SearchResults search_on_pool(const ThreadPool& pool, const index::VectorIndex& index,
                                    std::size_t n, const float* queries, std::size_t k) {
  const auto blocks = static_cast<std::size_t>(pool.threads());
  if (blocks < 2 || n < 2 * blocks || !index.per_query_results()) {
    return index.search(n, queries, k);
  }
  const std::size_t dim = index.dim();
  std::vector<index::SearchResults> parts(blocks);
  const std::size_t per_block = (n + blocks - 1) / blocks;
  pool.for_each(blocks, [&](std::size_t b) {
    const std::size_t first = b * per_block;
    const std::size_t count = std::min(n, first + per_block) - std::min(n, first);
    if (count == 0) return;
    index::set_index_threads(1);  // this thread's FAISS loops: no OpenMP team of its own
    parts[b] = index.search(count, queries + first * dim, k);
  });
  index::SearchResults all;
  all.k = k;
  for (const index::SearchResults& part : parts) {
    if (part.num_queries > 0) all.append(part);
  }
  return all;
}

}  // namespace winnow::curation::ingest
