#include "winnow/curation/dataset/pool_search.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace winnow::curation {

index::SearchResults search_on_pool(const ThreadPool& pool, const index::VectorIndex& index,
                                    std::size_t n, const float* queries, std::size_t k) {
  // As many blocks as threads, each of at least the index's smallest call
  // whose results are per query (and 2 queries).
  const std::size_t smallest = std::max<std::size_t>(2, index.min_queries_per_call());
  const std::size_t blocks = std::min(static_cast<std::size_t>(pool.threads()), n / smallest);
  if (blocks < 2 || !index.per_query_results()) {
    return index.search(n, queries, k);
  }
  const std::size_t dim = index.dim();
  // The queries in order of their locality keys, so that each thread's block
  // reads its own part of the index (an IVF's cells near its queries) while
  // it is in cache, instead of each reading all of it for a share of the
  // queries. Each query's results are its own either way.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const std::vector<std::uint32_t> keys = index.locality_keys(n, queries);
  std::vector<float> sorted;
  if (!keys.empty()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    sorted.resize(n * dim);
    for (std::size_t r = 0; r < n; ++r) {
      std::copy_n(queries + order[r] * dim, dim, sorted.data() + r * dim);
    }
    queries = sorted.data();
  }
  std::vector<index::SearchResults> parts(blocks);
  // n / blocks queries a block, the first n % blocks one more: none smaller
  // than `smallest`.
  const std::size_t base = n / blocks, extra = n % blocks;
  pool.for_each(blocks, [&](std::size_t b) {
    const std::size_t first = b * base + std::min(b, extra);
    const std::size_t count = base + (b < extra ? 1 : 0);
    index::set_index_threads(1);  // this thread's FAISS loops: no OpenMP team of its own
    parts[b] = index.search(count, queries + first * dim, k);
  });
  // Back to the callers' order: row r of the blocks is query order[r].
  index::SearchResults all = index::SearchResults::padded(n, k);
  const std::size_t per_query = parts[0].probes_per_query;
  const bool probed = per_query > 0 && std::all_of(parts.begin(), parts.end(), [&](const auto& p) {
                        return p.num_queries == 0 || p.probes_per_query == per_query;
                      });
  if (probed) {
    all.probes_per_query = per_query;
    all.probes.resize(n * per_query);
  }
  std::size_t r = 0;
  for (const index::SearchResults& part : parts) {
    for (std::size_t row = 0; row < part.num_queries; ++row, ++r) all.set_row(order[r], part, row);
  }
  return all;
}

}  // namespace winnow::curation
