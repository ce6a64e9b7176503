// JSON views of store records shared by the subcommands' outputs.
#pragma once

#include <nlohmann/json.hpp>

#include "winnow/curation/ingest_pipeline.h"
#include "winnow/store/batch_record.h"
#include "winnow/store/sample_status.h"

namespace winnow::cli {

// {"accepted": n, ..., "rejected": n, "total": n}
nlohmann::json counts_json(const StatusCounts& counts);
// id, file, checksum, state, attempts, counts, timestamps, error.
nlohmann::json batch_json(const BatchRecord& batch);
// One ingest result: batch, file, skipped, counts, seconds, samples_per_second.
nlohmann::json batch_report_json(const curation::BatchReport& report);
// What `winnow status --json` prints: counts, sources, index, embedder, last_batch.
nlohmann::json status_json(curation::IngestPipeline& pipeline);

}  // namespace winnow::cli
