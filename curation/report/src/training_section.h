// The quality report's "training" section (docs/report-schema.md): what the
// training runs taken back with `winnow import-training` say, per class: the
// judged samples (accepted and label_issue) with statistics of a run on their
// current label, their mean training loss, how many are above the label
// check's threshold, and the samples the model finds hardest. Null when no
// sample has statistics.
#pragma once

#include <nlohmann/json.hpp>

#include "winnow/curation/dataset/label_names.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation::report {

// The hardest samples listed per class.
inline constexpr std::size_t kHardestPerClass = 5;

// Reads the store's training_stats rows (inside the caller's read snapshot).
nlohmann::json training_json(store::MetadataStore& store, const LabelNames& names);

}  // namespace winnow::curation::report
