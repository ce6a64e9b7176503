#include "prepared_chunk.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "winnow/error.h"
#include "winnow/index/exact_scores.h"

#include "winnow/curation/dataset/pool_search.h"

namespace winnow::curation::ingest {

namespace {

// Whether the chunk's neighbours come from prior lists: a bulk job is under
// way and every embedded record of the chunk brings a list (a chunk with one
// record without is searched as a whole, as outside a job).
bool prior_lists_cover(const PreparedChunk& chunk, const bulk::JobPositions* job) {
  if (job == nullptr) return false;
  bool any = false;
  for (std::size_t e = 0; e < chunk.entries.size(); ++e) {
    if (chunk.row[e] < 0) continue;
    const ManifestRecord& record = *chunk.entries[e].record;
    const bulk::JobRecord& place = chunk.jobs[e];
    if (!place.prior_neighbours) return false;
    WINNOW_THROW_IF_NOT(job->holds(place.position),
                        "record '{}' (line {}) has job position {}, outside the job's {} records",
                        record.key, record.line, place.position, job->size());
    any = true;
  }
  return any;
}

// Embeds the chunk's records (on the pool when the embedder allows); rows
// follow the entries' order, and a record that failed gets no row.
void embed_chunk(const IngestContext& context, PreparedChunk& chunk) {
  const std::size_t dim = context.embedder.dim();
  const std::size_t end = chunk.entries.size();
  chunk.embed_errors.assign(end, std::string());
  chunk.content_kind_errors.assign(end, 0);
  chunk.row.assign(end, -1);
  std::vector<std::size_t> to_embed;
  for (std::size_t e = 0; e < end; ++e) {
    // Annotation-only records have nothing to embed (import-annotations).
    if (!chunk.entries[e].ok() || chunk.entries[e].record->kind == ContentKind::none) continue;
    const std::vector<float>& precomputed = chunk.jobs[e].embedding;
    WINNOW_THROW_IF_NOT(precomputed.empty() || precomputed.size() == dim,
                        "record '{}' comes with a precomputed embedding of {} values; the "
                        "dataset's embedder {} gives {}",
                        chunk.entries[e].record->key, precomputed.size(), context.embedder.spec(),
                        dim);
    to_embed.push_back(e);
  }
  chunk.vectors.assign(to_embed.size() * dim, 0.0f);
  std::vector<char> failed(to_embed.size(), 0);
  const auto embed_one = [&](std::size_t r) {
    const ManifestRecord& record = *chunk.entries[to_embed[r]].record;
    const std::vector<float>& precomputed = chunk.jobs[to_embed[r]].embedding;
    float* out = chunk.vectors.data() + r * dim;
    if (!precomputed.empty()) {  // by the same embedder elsewhere (winnow.dask)
      std::copy(precomputed.begin(), precomputed.end(), out);
      return;
    }
    try {
      context.embedder.embed(record, out);
    } catch (const winnow::Error& err) {
      chunk.embed_errors[to_embed[r]] = err.what();
      chunk.content_kind_errors[to_embed[r]] =
          dynamic_cast<const embed::ContentKindError*>(&err) != nullptr;
      failed[r] = 1;
    }
  };
  if (context.embedder.thread_safe()) {
    context.pool.for_each(to_embed.size(), embed_one);
  } else {
    for (std::size_t r = 0; r < to_embed.size(); ++r) embed_one(r);
  }
  std::size_t rows = 0;  // the rows of the records that failed are dropped
  for (std::size_t r = 0; r < to_embed.size(); ++r) {
    if (failed[r]) continue;
    if (rows != r) {
      std::copy_n(chunk.vectors.data() + r * dim, dim, chunk.vectors.data() + rows * dim);
    }
    chunk.row[to_embed[r]] = static_cast<int>(rows++);
  }
  chunk.vectors.resize(rows * dim);
  chunk.rows = rows;
}

}  // namespace

void read_chunk_entries(const JobEntrySource& next_entry, std::size_t size, const std::string& name,
                        const std::atomic<bool>* stop, PreparedChunk& chunk) {
  chunk = PreparedChunk{};
  while (chunk.entries.size() < size) {
    if (stop != nullptr && stop->load()) throw BatchInterrupted(name);
    if (!next_entry(chunk.entries.emplace_back(), chunk.jobs.emplace_back())) {
      chunk.entries.pop_back();
      chunk.jobs.pop_back();
      chunk.last = true;
      return;
    }
  }
}

namespace {

// About what a prepared chunk holds in memory: its records' contents and
// embeddings, its vectors, and a few hundred bytes a record besides.
std::size_t held_bytes(const PreparedChunk& chunk) {
  constexpr std::size_t kPerRecord = sizeof(readers::ManifestEntry) + sizeof(ManifestRecord) + 128;
  std::size_t bytes = chunk.vectors.size() * sizeof(float);
  for (std::size_t e = 0; e < chunk.entries.size(); ++e) {
    bytes += kPerRecord;
    if (!chunk.entries[e].record) continue;
    const ManifestRecord& r = *chunk.entries[e].record;
    bytes += r.key.size() + r.path.size() + r.resolved_path.size() + r.text.size() +
             r.source.size() + r.pixels.size() + r.colour.size() +
             (r.embedding.size() + chunk.jobs[e].embedding.size()) * sizeof(float);
  }
  return bytes;
}

}  // namespace

std::size_t search_block_chunks(const std::vector<PreparedChunk>& prepared) {
  std::size_t bytes = 0;
  for (const PreparedChunk& chunk : prepared) bytes += held_bytes(chunk);
  const std::size_t per_chunk =
      std::max<std::size_t>(1, bytes / std::max<std::size_t>(1, prepared.size()));
  return std::clamp<std::size_t>(kSearchBlockBytes / per_chunk, 1, kSearchBlockChunks);
}

void read_block_entries(const JobEntrySource& next_entry, std::size_t chunk_size,
                        std::size_t chunks, const std::string& name, const std::atomic<bool>* stop,
                        std::vector<PreparedChunk>& block) {
  block.clear();
  do {
    read_chunk_entries(next_entry, chunk_size, name, stop, block.emplace_back());
  } while (block.size() < chunks && !block.back().last);
}

namespace {

// Completes the chunk's deferred entries (ManifestReader::next_deferred:
// parsing, reading and decoding files) and embeds its records.
void complete_and_embed(const IngestContext& context, PreparedChunk& chunk) {
  std::vector<std::size_t> deferred;
  for (std::size_t e = 0; e < chunk.entries.size(); ++e) {
    if (chunk.entries[e].deferred) deferred.push_back(e);
  }
  context.pool.for_each(deferred.size(),
                        [&](std::size_t i) { chunk.entries[deferred[i]].complete(); });
  embed_chunk(context, chunk);
  chunk.listed = prior_lists_cover(chunk, context.job);
}

}  // namespace

void prepare_block(const IngestContext& context, std::size_t k, std::vector<PreparedChunk>& block) {
  std::vector<PreparedChunk*> to_search;
  std::size_t rows = 0;
  for (PreparedChunk& chunk : block) {
    complete_and_embed(context, chunk);
    if (chunk.rows > 0 && !chunk.listed) {
      to_search.push_back(&chunk);
      rows += chunk.rows;
    }
  }
  if (rows == 0 || context.index.size() == 0) return;
  std::vector<float> queries;
  queries.reserve(rows * context.embedder.dim());
  for (const PreparedChunk* chunk : to_search) {
    queries.insert(queries.end(), chunk->vectors.begin(), chunk->vectors.end());
  }
  const index::SearchResults found =
      search_on_pool(context.pool, context.index, rows, queries.data(), k);
  std::size_t first = 0;
  for (PreparedChunk* chunk : to_search) {
    chunk->searched = true;
    chunk->found = found.rows(first, chunk->rows);
    first += chunk->rows;
  }
}

namespace {

// Row q of `found` with the candidates (score, id) above its k-th best merged
// in: the best k, best first, ties to the lower id.
void merge_row(index::SearchResults& found, std::size_t q, std::size_t k,
               std::vector<std::pair<float, std::int64_t>>& merged) {
  for (std::size_t r = 0; r < k && found.id(q, r) >= 0; ++r) {
    merged.emplace_back(found.similarity(q, r), found.id(q, r));
  }
  const std::size_t keep = std::min(merged.size(), k);
  std::partial_sort(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(keep),
                    merged.end(), [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  for (std::size_t r = 0; r < k; ++r) {
    found.ids[q * k + r] = r < keep ? merged[r].second : -1;
    found.similarities[q * k + r] =
        r < keep ? merged[r].first : -std::numeric_limits<float>::infinity();
  }
}

// fold_in for every row and every vector.
void fold_in_all(index::SearchResults& found, std::size_t rows, const float* queries,
                 const std::vector<std::int64_t>& ids, const std::vector<float>& vectors,
                 std::size_t dim, std::size_t k, const ThreadPool& pool) {
  const std::size_t n = ids.size();
  // Four rows at a time: the kernel reads each vector once for the four.
  constexpr std::size_t kBlock = 4;
  pool.for_each((rows + kBlock - 1) / kBlock, [&](std::size_t block) {
    const std::size_t first = block * kBlock;
    const std::size_t m = std::min(kBlock, rows - first);
    std::vector<float> scores(m * n);
    std::array<const float*, kBlock> block_queries{};
    std::array<float*, kBlock> block_scores{};
    for (std::size_t j = 0; j < m; ++j) {
      block_queries[j] = queries + (first + j) * dim;
      block_scores[j] = scores.data() + j * n;
    }
    index::inner_products_many(block_queries.data(), m, vectors.data(), n, dim,
                               block_scores.data());
    std::vector<std::pair<float, std::int64_t>> merged;
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t q = first + j;
      merged.clear();
      // Only vectors above the row's k-th best can enter it (the row's ids
      // are older, so lower: an equal score stays out).
      const float kth = found.similarity(q, k - 1);
      const float* row_scores = block_scores[j];
      for (std::size_t i = index::first_above(row_scores, 0, n, kth); i < n;
           i = index::first_above(row_scores, i + 1, n, kth)) {
        merged.emplace_back(row_scores[i], ids[i]);
      }
      merge_row(found, q, k, merged);
    }
  });
}

// fold_in for the vectors whose home cell a row's search scanned (or that
// have none): the vectors by home cell, then per row those of its probes.
void fold_in_probed(index::SearchResults& found, std::size_t rows, const float* queries,
                    const std::vector<std::int64_t>& ids, const std::vector<float>& vectors,
                    const std::vector<std::uint32_t>& homes, std::size_t dim, std::size_t k,
                    const ThreadPool& pool) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_cell;  // home cell, vector
  std::vector<std::uint32_t> anywhere;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (homes[i] == kAnyCell) {
      anywhere.push_back(static_cast<std::uint32_t>(i));
    } else {
      by_cell.emplace_back(homes[i], static_cast<std::uint32_t>(i));
    }
  }
  std::sort(by_cell.begin(), by_cell.end());
  const std::size_t per_query = found.probes_per_query;
  constexpr std::size_t kRows = 16;  // a pool task's rows
  pool.for_each((rows + kRows - 1) / kRows, [&](std::size_t block) {
    std::vector<std::uint32_t> candidates;
    std::vector<std::pair<float, std::int64_t>> merged;
    for (std::size_t q = block * kRows; q < std::min(rows, (block + 1) * kRows); ++q) {
      candidates = anywhere;
      for (std::size_t p = 0; p < per_query; ++p) {
        const std::uint32_t cell = found.probes[q * per_query + p];
        auto it = std::lower_bound(by_cell.begin(), by_cell.end(), std::make_pair(cell, 0u));
        for (; it != by_cell.end() && it->first == cell; ++it) candidates.push_back(it->second);
      }
      merged.clear();
      const float kth = found.similarity(q, k - 1);
      const float* query = queries + q * dim;
      for (const std::uint32_t i : candidates) {
        const float score = index::inner_product(query, vectors.data() + i * dim, dim);
        if (score > kth) merged.emplace_back(score, ids[i]);
      }
      merge_row(found, q, k, merged);
    }
  });
}

}  // namespace

void fold_in(index::SearchResults& found, std::size_t rows, const float* queries,
             const std::vector<std::int64_t>& ids, const std::vector<float>& vectors,
             const std::vector<std::uint32_t>& homes, std::size_t dim, std::size_t k,
             const ThreadPool& pool) {
  if (rows == 0 || ids.empty()) return;
  if (found.num_queries != rows) found = index::SearchResults::padded(rows, k);
  if (found.probes_per_query > 0 && homes.size() == ids.size()) {
    fold_in_probed(found, rows, queries, ids, vectors, homes, dim, k, pool);
  } else {
    fold_in_all(found, rows, queries, ids, vectors, dim, k, pool);
  }
}

}  // namespace winnow::curation::ingest
