// The label check's standing on a dataset: the evidence read from the
// store (labels::LabelEvidence), and how `status`, the batch summary and the
// report say where it judges and where it abstains, in one JSON object and
// one line of text. Definitions: docs/curation.md, "When the label check
// abstains".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/labels/label_evidence.h"

namespace winnow::store {
class MetadataStore;
}

namespace winnow::curation {

// The options the dataset's config gives: min_lift, and at least label_k
// judged samples of a class.
labels::LabelEvidenceOptions label_evidence_options(const CurationConfig& config);

// The evidence of the accepted and label_issue samples stored (inside a
// caller's transaction, its writes included).
labels::LabelEvidence stored_label_evidence(store::MetadataStore& store,
                                            const CurationConfig& config);

// {"judges": "every class" | "some classes" | "no class" | "not yet",
//  "lift", "min_lift", "samples", "classes", "abstained" (how many),
//  "abstained_classes": [{"label", "samples", "lift"}] (at most 20, lowest
//  lift first), "line"}: the same line as label_check_line.
nlohmann::json label_check_json(const labels::LabelEvidence& evidence, const LabelNames& names);

// "label check: ..." for a person: where it judges, where it abstains with
// the measured lift, and what would help.
std::string label_check_line(const labels::LabelEvidence& evidence, const LabelNames& names);

}  // namespace winnow::curation
