// JSON views of store records shared by the subcommands' outputs.
#pragma once

#include <nlohmann/json.hpp>

#include "winnow/curation/ingest_pipeline.h"
#include "winnow/store/batch_record.h"
#include "winnow/store/sample_status.h"

namespace winnow::cli {

// The text of `j` for output. File names and other bytes from outside may be
// invalid UTF-8: such bytes are replaced (U+FFFD) rather than thrown on.
std::string json_text(const nlohmann::json& j, int indent = -1);

// {"accepted": n, ..., "rejected": n, "total": n}
nlohmann::json counts_json(const StatusCounts& counts);
// id, file, checksum, state, attempts, counts, timestamps, error.
nlohmann::json batch_json(const BatchRecord& batch);
// One ingest result: batch, file, skipped, counts, seconds, samples_per_second.
nlohmann::json batch_report_json(const curation::BatchReport& report);
// What `winnow status --json` prints: counts, sources, index, embedder, last_batch.
nlohmann::json status_json(curation::IngestPipeline& pipeline);

}  // namespace winnow::cli
