#include "cli_json.h"

#include "winnow/store/sample_history.h"

#include "winnow/curation/core/reviews_json.h"

#include "winnow/curation/dataset/label_check.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/version.h"

#include <string>
#include <vector>

namespace winnow::cli {

using nlohmann::json;

json batch_json(const store::BatchRecord& b) {
  json j = {{"id", b.id},
            {"file", b.file_name},
            {"checksum", b.checksum},
            {"state", std::string(to_string(b.state))},
            {"attempts", b.attempts},
            {"counts", counts_json(b.counts)},
            {"created_at", b.created_at}};
  if (b.started_at) j["started_at"] = *b.started_at;
  if (b.finished_at) j["finished_at"] = *b.finished_at;
  if (!b.error.empty()) j["error"] = b.error;
  return j;
}

json image_issue_counts_json(const store::ImageIssueCounts& counts) {
  json issues = json::object();
  for (store::ImageIssue issue : store::kAllImageIssues) {
    issues[to_string(issue)] = counts.issues[static_cast<std::size_t>(issue)];
  }
  return {{"images", counts.images}, {"with_issues", counts.with_issue}, {"issues", issues}};
}

json status_json(curation::Dataset& dataset) {
  store::MetadataStore& store = dataset.store();
  json j = counts_json(store.count_by_status());
  j["revision"] = store::SampleHistory(store.database()).revision();
  json sources = json::object();
  for (const auto& [name, c] : store.count_by_source()) {
    sources[name.empty() ? "(unknown)" : name] = counts_json(c);
  }
  j["sources"] = sources;
  const auto version_or_null = [](const std::optional<std::string>& v) {
    return v ? json(*v) : json(nullptr);
  };
  j["winnow"] = {{"version", kVersion},
                 {"database_created_by", version_or_null(store.created_by())},
                 {"database_written_by", version_or_null(store.written_by())}};
  const curation::IndexInfo info = dataset.index_info();
  j["index"] = {{"type", info.type},
                {"config", info.config},
                {"vectors", info.vectors},
                {"file", info.file},
                {"rebuilt_on_open", info.rebuilt}};
  if (info.rebuilt) j["index"]["rebuild_reason"] = info.rebuild_reason;
  if (info.caught_up.added + info.caught_up.removed > 0) {
    j["index"]["caught_up_on_open"] = {{"added", info.caught_up.added},
                                       {"removed", info.caught_up.removed}};
  }
  j["embedder"] = dataset.embedder().spec();
  const curation::labels::LabelEvidence evidence =
      curation::stored_label_evidence(store, dataset.config());
  j["label_check"] = evidence.samples() > 0
                         ? curation::label_check_json(evidence, dataset.label_names())
                         : json(nullptr);
  j["label_conflicts"] = store.count_label_conflicts();
  j["reviews"] = curation::reviews_json(store.reviews());
  j["image_issues"] = image_issue_counts_json(store::ImageQualityTable(store.database()).count());
  const std::vector<store::BatchRecord> batches = store.all_batches();  // ordered by id
  j["last_batch"] = batches.empty() ? json(nullptr) : batch_json(batches.back());
  return j;
}

}  // namespace winnow::cli
