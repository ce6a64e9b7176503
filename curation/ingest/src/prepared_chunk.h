// PreparedChunk: the next micro_batch entries of an ingest batch, parsed,
// embedded and searched in the indexes, ready to be decided.
//
// IngestBatch prepares chunk i+1 on the pool while it decides and writes
// chunk i (docs/curation.md, "Order of decisions"). The preparation only
// reads the indexes; chunk i joins them once chunk i+1 is prepared, so chunk
// i+1's search lacks exactly chunk i's vectors, and fold_in adds those,
// scored exactly, before chunk i+1 is decided. One thread does the same in
// the same order, so its decisions are those of several threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "winnow/curation/ingest/ingest_pipeline.h"
#include "winnow/curation/thread_pool.h"
#include "winnow/index/vector_index.h"

#include "ingest_context.h"

namespace winnow::curation::ingest {

struct PreparedChunk {
  std::vector<ManifestEntry> entries;
  bool last = false;  // the source had no entry after these
  // The embedded entries' vectors, row by row; an entry's row, -1 when it
  // was not embedded (rejected, annotations only, or embed_errors says why).
  std::vector<float> vectors;
  std::size_t rows = 0;
  std::vector<int> row;
  std::vector<std::string> embed_errors;
  // Every embedded record brings a prior neighbour list (a bulk job): the
  // indexes were not searched.
  bool listed = false;
  // Each row's nearest accepted and flagged samples, k each, when searched
  // (the index held vectors, or fold_in added some).
  index::SearchResults found, flagged_found;
  bool searched = false, flagged_searched = false;
};

// Reads the next `size` entries of `next_entry` into a cleared `chunk`
// (their parsing deferred: prepare_chunk does it), on the caller's thread:
// a source may ask the store. Throws BatchInterrupted (naming `name`) when
// `stop` is set between two entries.
void read_chunk_entries(const EntrySource& next_entry, std::size_t size, const std::string& name,
                        const std::atomic<bool>* stop, PreparedChunk& chunk);

// Completes the chunk's deferred entries and embeds its records on the pool,
// then searches both indexes for their `k` nearest. Reads the context's
// indexes, embedder and job; writes only `chunk`.
void prepare_chunk(const IngestContext& context, std::size_t k, PreparedChunk& chunk);

// Adds to each row of `found` (`rows` queries at `queries`, `k` results each)
// the vectors `vectors` (under `ids`, dim floats each) scored exactly, keeping
// the best k, best first, ties to the lower id. Rows run on the pool.
void fold_in(index::SearchResults& found, std::size_t rows, const float* queries,
             const std::vector<std::int64_t>& ids, const std::vector<float>& vectors,
             std::size_t dim, std::size_t k, const ThreadPool& pool);

}  // namespace winnow::curation::ingest
