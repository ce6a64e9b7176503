// PreparedChunk: the next micro_batch entries of an ingest batch, parsed,
// embedded and searched in the index, ready to be decided.
//
// IngestBatch prepares the chunks a block at a time (one chunk, or up to
// kSearchBlockChunks: IngestBatch::next_block_chunks), block b+1 on the pool
// while it decides and writes block b's chunks one by one (docs/ingest.md,
// "Order of decisions"). Block b joins the index at the start of block
// b+2's preparation, so a chunk of block b+1 was searched without block b's
// vectors and without those of its own block's earlier chunks, and fold_in
// adds those, scored exactly, before the chunk is decided: each row the ones
// in the cells its search scanned, when the index has cells (IVF), as the
// index will once they join it; otherwise all of them.
// One thread does the same in the same order, so its decisions are those of
// several threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/index/vector_index.h"

#include "ingest_context.h"

namespace winnow::curation::ingest {

// Chunks searched together at most, outside a bulk job and when the index
// wants many queries per search call (VectorIndex::queries_per_search: an
// IVF index costs much less a query in large calls than in small ones),
// while each chunk then folds in up to two blocks of vectors, cheaply when
// only those of its rows' scanned cells (docs/ingest.md, "Order of
// decisions")...
inline constexpr std::size_t kSearchBlockChunks = 16;
// ... and fewer when its records are large: two blocks are held at once (one
// decided, one prepared), so a block holds about this many bytes of records
// at most, or one chunk (decoded image files: one chunk a block, as before).
inline constexpr std::size_t kSearchBlockBytes = std::size_t{8} << 20;

struct PreparedChunk {
  std::vector<readers::ManifestEntry> entries;
  // Per entry: what a bulk job adds to it (empty outside a job).
  std::vector<bulk::JobRecord> jobs;
  bool last = false;  // the source had no entry after these
  // The embedded entries' vectors, row by row; an entry's row, -1 when it
  // was not embedded (rejected, annotations only, or embed_errors says why).
  std::vector<float> vectors;
  std::size_t rows = 0;
  std::vector<int> row;
  std::vector<std::string> embed_errors;
  // Per entry: its embed error was the embedder's refusal of its kind of
  // content (embed::ContentKindError).
  std::vector<char> content_kind_errors;
  // Every embedded record brings a prior neighbour list (a bulk job): the
  // index was not searched.
  bool listed = false;
  // Each row's k nearest judged samples (accepted and label_issue), when
  // searched (the index held vectors, or fold_in added some).
  index::SearchResults found;
  bool searched = false;
};

// Reads the next `size` entries of `next_entry` into a cleared `chunk`
// (their parsing deferred: prepare_chunk does it), on the caller's thread:
// a source may ask the store. Throws BatchInterrupted (naming `name`) when
// `stop` is set between two entries.
void read_chunk_entries(const JobEntrySource& next_entry, std::size_t size, const std::string& name,
                        const std::atomic<bool>* stop, PreparedChunk& chunk);

// How many chunks the block after `prepared` may hold: kSearchBlockChunks,
// fewer when `prepared`'s chunks held more than kSearchBlockBytes together
// (its records' contents, embeddings and vectors), at least one.
std::size_t search_block_chunks(const std::vector<PreparedChunk>& prepared);

// Reads up to `chunks` chunks of `chunk_size` entries into a cleared `block`
// (at least one; the last may be empty and marked last), as read_chunk_entries.
void read_block_entries(const JobEntrySource& next_entry, std::size_t chunk_size,
                        std::size_t chunks, const std::string& name, const std::atomic<bool>* stop,
                        std::vector<PreparedChunk>& block);

// Completes the block's deferred entries and embeds its records on the pool,
// then searches the index for the `k` nearest of every row of the block at
// once, in one call: an IVF index scans a call's queries cell by cell, so
// a query costs less in a large call (docs/ingest.md, "Order of
// decisions"). Reads the context's index,
// embedder and job; writes only `block`.
void prepare_block(const IngestContext& context, std::size_t k, std::vector<PreparedChunk>& block);

// A vector's home cell when it has none (its chunk's search scanned no
// cells): fold_in scores it for every row.
inline constexpr std::uint32_t kAnyCell = std::numeric_limits<std::uint32_t>::max();

// Adds to each row of `found` (`rows` queries at `queries`, `k` results each)
// the vectors `vectors` (under `ids`, dim floats each) scored exactly, keeping
// the best k, best first, ties to the lower id. Rows run on the pool.
// When the search scanned cells (found.probes) and `homes` gives each vector
// its home cell (the first probe of its own search, or kAnyCell), a row
// scores only the vectors whose home it scanned, as the index will once they
// join it: an IVF row at 1M scans 16 of thousands of cells, so it scores a
// few of the blocks' vectors instead of all (docs/ingest.md, "Order of
// decisions").
// Otherwise every row scores every vector.
void fold_in(index::SearchResults& found, std::size_t rows, const float* queries,
             const std::vector<std::int64_t>& ids, const std::vector<float>& vectors,
             const std::vector<std::uint32_t>& homes, std::size_t dim, std::size_t k,
             const ThreadPool& pool);

}  // namespace winnow::curation::ingest
