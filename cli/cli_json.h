// JSON views of store records shared by the subcommands' outputs.
#pragma once

#include <nlohmann/json.hpp>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/batch_report.h"
#include "winnow/curation/core/json_text.h"
#include "winnow/curation/core/status_counts_json.h"
#include "winnow/store/batch_record.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/sample_status.h"

namespace winnow::cli {

using curation::json_text;  // invalid UTF-8 replaced, never thrown on

using curation::counts_json;  // {"accepted": n, ..., "rejected": n, "total": n}
// id, file, checksum, state, attempts, counts, timestamps, error.
nlohmann::json batch_json(const store::BatchRecord& batch);
// {"images": n, "with_issues": n, "issues": {"blurry": n, ...}}: decoded image
// files and how many have each image-quality issue.
nlohmann::json image_issue_counts_json(const store::ImageIssueCounts& counts);
// What `winnow status --json` prints: counts, sources, index, embedder,
// image_issues, last_batch.
nlohmann::json status_json(curation::Dataset& dataset);

}  // namespace winnow::cli
