// BatchTextSketches: what an ingest batch does with the sketches of the
// stored texts (StoredTextSketches, the dataset's): rules a text record's
// stored candidates out unread when a sketch bounds their similarity below
// the text verifier's threshold, and keeps a sketch of every text the batch
// writes or reads, for the process's later batches and, in the store (in the
// batch's transaction), for later processes. With no sketches (null, or
// sketches of another shingle length than the verifier's) it rules nothing
// out.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/dataset/lookup/stored_text_sketches.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/store/database.h"
#include "winnow/store/text_sketch_table.h"

namespace winnow::curation::ingest {

class BatchTextSketches {
 public:
  BatchTextSketches(StoredTextSketches* sketches, const dedup::TextNearDuplicateVerifier& verifier,
                    store::Database& db);

  // The shingles a text record's stored candidates are ruled out with, or
  // nothing when the process keeps no text sketches (or not this record's kind).
  std::optional<std::vector<std::uint64_t>> shingles(const ManifestRecord& record) const;
  // Whether stored sample `id` surely falls below the text verifier's
  // threshold against a record of these shingles: its kept sketch bounds
  // their similarity. A sample without a sketch (not a text, or not yet
  // read) is not ruled out.
  bool rules_out(const std::vector<std::uint64_t>& shingles, std::int64_t id) const;

  // Whether a read of stored sample `id` should keep its sketch: sketches
  // are kept and `id` has none yet.
  bool wants(std::int64_t id) const;
  // Keeps the sketch of sample `id`'s text, written or read. Another content
  // at `id` drops any sketch there: an id a rolled-back batch had given a
  // text may come back holding an image (its stored sketch rolled back with it).
  void keep(std::int64_t id, const ManifestRecord& record);
  // Writes the sketches kept since the last call, as one row.
  void store();

 private:
  StoredTextSketches* sketches_;
  const dedup::TextNearDuplicateVerifier& verifier_;
  store::TextSketchTable table_;
  std::vector<store::StoredTextSketch> unstored_;  // kept, written at the next store()
};

}  // namespace winnow::curation::ingest
