// BatchReport: what one ingest batch did, as the CLI, the daemon and the
// Python writer report it (to_json: the one JSON form of it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winnow/curation/ingest/rejection_summary.h"
#include "winnow/curation/review/stale_labels.h"
#include "winnow/store/sample_status.h"

namespace winnow::curation::ingest {

// Records of a bulk job (winnow.dask) whose neighbours came from the prior
// lists its workers computed instead of an index search, and those of them
// searched after all: too few of the listed records were accepted for the
// list to hold the record's nearest accepted ones. Of the near-duplicate
// candidates of the job's records: those whose verdict the workers made
// (ListedVerification) and those the writer verified itself.
struct JobNeighbourCounts {
  std::int64_t listed = 0;
  std::int64_t searched = 0;
  std::int64_t verdicts_taken = 0;
  std::int64_t verified_by_writer = 0;
};

// Where a batch's time went, in seconds. The writer's phases follow one
// another and add up to about the batch's seconds; pool_prepare ran beside
// them on the pool's thread. With one thread the writer prepares each block
// itself before deciding the one before, and that time is both its
// wait_for_pool and the pool_prepare.
struct BatchPhaseSeconds {
  double read = 0.0;                 // writer: manifest lines read (not yet parsed)
  double prepare_first_block = 0.0;  // writer: the first block parsed, embedded, searched
  double decide = 0.0;               // writer: chunks decided and written to the store
  double wait_for_pool = 0.0;        // writer: waiting for (and helping) the next block
  double pool_prepare = 0.0;         // pool: next blocks prepared, the one before indexed
  double rejudge_labels = 0.0;       // writer: stale labels judged again
  double commit = 0.0;               // writer: the batch's transaction committed
  double save_index = 0.0;           // writer: the index snapshot saved, when it was
};

// What a batch's later rounds of annotations did (records without content
// whose key is a stored sample; docs/annotations.md, "Later rounds").
struct AnnotationRoundCounts {
  std::int64_t items = 0;       // stored samples whose annotations or label changed
  std::int64_t added = 0;       // an annotator new to the sample
  std::int64_t unchanged = 0;   // the same annotator and label again
  std::int64_t replaced = 0;    // an annotator's new label for the sample
  std::int64_t relabelled = 0;  // samples whose label the round moved
};

struct BatchReport {
  std::int64_t batch_id = 0;
  std::string name;
  bool skipped = false;        // the manifest (checksum) was already done
  store::StatusCounts counts;  // of this batch (the stored ones when skipped)
  // Why records were rejected: groups of like reasons, most frequent first
  // (empty when skipped); rejections past RejectionSummary::kMaxGroups groups.
  std::vector<RejectionGroup> rejections;
  std::int64_t other_rejections = 0;
  // Entries the reader refused past the batch's first 10,000: counted in
  // `rejections`, not stored as rejected samples (and not in `counts`).
  std::int64_t rejected_not_stored = 0;
  double seconds = 0.0;
  // Whether the index file was saved after the batch (IndexSnapshots), and
  // why not when a save failed (the index is a cache: the next open catches
  // up from the store).
  bool index_saved = false;
  std::string index_save_error;
  // Earlier samples whose labels were judged again after the batch.
  review::LabelRejudgeCounts labels_rejudged;
  // Where the label check judges and abstains once the batch is in
  // (label_check_json), with "would_have_flagged": this batch's records the
  // vote would have flagged where it abstains. Null for a dataset without a
  // judged label.
  nlohmann::json label_check;
  // This batch's duplicates whose label differs from their original's.
  std::int64_t label_conflicts = 0;
  AnnotationRoundCounts annotation_rounds;
  JobNeighbourCounts job_neighbours;  // 0 outside a bulk job
  BatchPhaseSeconds phases;
};

// The batch's summary as `winnow ingest` and the import commands print it
// (docs/cli.md, "Why records were rejected"; its seconds_by_phase:
// docs/ingest.md, "Where a batch's time goes").
nlohmann::json to_json(const BatchReport& report);

}  // namespace winnow::curation::ingest
