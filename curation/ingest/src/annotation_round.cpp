#include "annotation_round.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/labels/dawid_skene.h"

namespace winnow::curation::ingest {

namespace {

// The majority label of `annotations` (labels::majority_label's rule, as at import).
std::optional<std::int64_t> majority(const std::vector<store::AnnotationRecord>& annotations) {
  std::map<std::int64_t, std::int64_t> votes;
  for (const store::AnnotationRecord& a : annotations) ++votes[a.label];
  return labels::majority_label(votes);
}

bool annotations_only(const store::SampleRecord& s) {
  return s.content_hash.rfind("annotations:", 0) == 0;
}

}  // namespace

void add_annotation_round(store::MetadataStore& store, LabelNames& names,
                          const store::SampleRecord& stored, const ManifestRecord& record,
                          std::int64_t batch_id, AnnotationRoundCounts& counts) {
  std::vector<store::AnnotationRecord> now = store.annotations_of(stored.id);
  std::int64_t added = 0;
  nlohmann::json replaced = nlohmann::json::array();
  for (const Annotation& a : record.annotations) {
    const std::int64_t label = names.add(a.label);
    store::AnnotationRecord* same_annotator = nullptr;
    for (store::AnnotationRecord& old : now) {
      const bool match = a.annotator.empty() ? old.annotator.empty() && old.label == label
                                             : old.annotator == a.annotator;
      if (match) same_annotator = &old;
    }
    if (same_annotator != nullptr && same_annotator->label == label) {
      ++counts.unchanged;
    } else if (same_annotator != nullptr) {
      replaced.push_back({{"annotator", a.annotator},
                          {"was", names.name_of(same_annotator->label)},
                          {"label", a.label}});
      store.set_annotation_label(same_annotator->id, label);
      same_annotator->label = label;
      ++counts.replaced;
    } else {
      store.add_annotation(stored.id, {a.annotator, label});
      store::AnnotationRecord fresh;
      fresh.sample_id = stored.id;
      fresh.annotator = a.annotator;
      fresh.label = label;
      now.push_back(fresh);
      ++added;
    }
  }
  counts.added += added;

  std::optional<std::int64_t> label = stored.label;
  if (!store.review_of(stored.id)) {
    if (record.label) {
      label = names.add(*record.label);
    } else if (annotations_only(stored)) {
      label = majority(now);
    }
  }
  const bool moved = label && label != stored.label;
  if (added == 0 && replaced.empty() && !moved) return;
  ++counts.items;
  nlohmann::json details = {{"added", added}, {"replaced", replaced}, {"line", record.line}};
  store.append_note(
      stored.id, batch_id, "annotations",
      fmt::format("a later round of annotations: {} added, {} replaced", added, replaced.size()),
      details.dump());
  if (moved) {
    const std::string was = stored.label ? names.name_of(*stored.label) : "none";
    store.relabel(
        stored.id, *label,
        fmt::format("label {} after a later round of annotations (was {})", names.name_of(*label),
                    was),
        nlohmann::json{{"annotation_round", {{"label", names.name_of(*label)}, {"was", was}}}}
            .dump());
    ++counts.relabelled;
  }
}

}  // namespace winnow::curation::ingest
