// Annotations over time: a record without content whose key is already a
// stored sample is a later round of annotations for it, merged into the
// sample instead of refused (docs/annotations.md, "Later rounds").
#pragma once

#include <cstdint>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/ingest/batch_report.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation::ingest {

// Merges `record`'s annotations into stored sample `stored`: the same
// (annotator, label) changes nothing; an annotator's new label replaces his
// old one; a new annotator adds one. What changed is one "annotations" event
// (the replaced labels in its details). The sample's label then follows: the
// record's gold label when it gives one, else, for a sample without content
// (annotations only), the majority of all its annotations, as at its import;
// a sample a person reviewed keeps its label.
void add_annotation_round(store::MetadataStore& store, LabelNames& names,
                          const store::SampleRecord& stored, const ManifestRecord& record,
                          std::int64_t batch_id, AnnotationRoundCounts& counts);

}  // namespace winnow::curation::ingest
