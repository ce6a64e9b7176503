// Which near-duplicate check a record gets: an image (pixels record or
// decoded image file) or a text is verified against its nearest candidates
// from the candidate gate up; any other record is deduplicated exactly only.
// The ingest's finders and a bulk job's workers (listed_verification.h) both
// choose by it, so that they verify the same pairs.
#pragma once

#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation::judge {

enum class NearDuplicateCheck { none, image, image_file, text };

NearDuplicateCheck near_duplicate_check(const ManifestRecord& record);

// The index cosine from which a candidate is verified: the pixels and text
// embedders are on different scales, and an image file's edited copy (a
// crop) has a lower cosine than a pixels record's.
double candidate_gate(const CurationConfig& config, NearDuplicateCheck check);

}  // namespace winnow::curation::judge
