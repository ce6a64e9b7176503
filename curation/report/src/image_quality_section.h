// The quality report's "image_quality" section (docs/report-schema.md): of
// every decoded image file (whatever its status), the share with each
// image-quality issue, for the dataset, per source and per class; issues
// worst (largest share) first, sources and classes by the share of their
// images with any issue, worst first.
#pragma once

#include <nlohmann/json.hpp>

#include "winnow/curation/dataset/label_names.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation::report {

// Reads the store's image_quality rows (inside the caller's read snapshot).
nlohmann::json image_quality_json(store::MetadataStore& store, const LabelNames& names);

}  // namespace winnow::curation::report
