// A record's content as the store's VectorTable keeps it, and back: the one
// place that knows how a ManifestRecord maps onto curation_vectors' columns.
#pragma once

#include <cstdint>
#include <optional>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/store/vector_table.h"

namespace winnow::curation {

// The content kept for `record`: text bytes, pixels (with the image's shape)
// or, for a path record, only its resolved path.
store::StoredContent stored_content(const ManifestRecord& record);

// The record an embedder or a verifier takes, keyed by the sample id; nothing
// for a path record, whose content is not kept.
std::optional<ManifestRecord> stored_record(std::int64_t sample_id,
                                            const store::StoredContent& content);

}  // namespace winnow::curation
