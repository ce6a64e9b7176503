// What a batch's summary says besides its JSON: a batch mostly refused says
// so, on stderr, with its most common reason and what would help; so does a
// batch whose label check abstained on records it would have flagged; a
// command whose batches rejected every record fails (exit 1, docs/cli.md).
#pragma once

#include <string>

#include "winnow/curation/ingest/batch_report.h"

namespace winnow::cli {

// Says on stderr when more than half of the batch's records were rejected,
// with the most common reason (and the dataset's `embedder` when that is the
// reason), and the label check's line when it abstained on records of the
// batch; returns 1 when the batch ran and rejected every record, else 0.
int say_batch_outcome(const curation::ingest::BatchReport& report, const std::string& embedder);

}  // namespace winnow::cli
