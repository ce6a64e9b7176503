// winnow export --db D [--status S] [--format jsonl|csv] [--details]: every sample
// with its status and the reason for it (and the decision's details), and the
// image-quality scores and issues of the samples whose file was an image.
// With --revision R: the samples as they were at revision R.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/core/printable_text.h"
#include "cli_json.h"
#include "csv_field.h"
#include "command.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/curation/review/consensus_labels.h"
#include "winnow/error.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/sample_history.h"
#include "winnow/store/training_stats_table.h"

namespace winnow::cli {

namespace {

// The image-quality columns of the CSV, after the others.
std::string image_quality_csv_header() {
  std::string header = ",image_width,image_height,image_issues";
  for (store::ImageIssue issue : store::kAllImageIssues) {
    header += fmt::format(",{}_score", to_string(issue));
  }
  return header;
}

// The issues' names, joined by `separator`.
std::string issue_names(const store::ImageQualityRecord& q, const char* separator) {
  std::string names;
  for (store::ImageIssue issue : store::kAllImageIssues) {
    if (!q.has(issue)) continue;
    if (!names.empty()) names += separator;
    names += to_string(issue);
  }
  return names;
}

std::string image_quality_csv(const std::optional<store::ImageQualityRecord>& q) {
  if (!q) return std::string(3 + store::kImageIssueCount, ',');
  std::string cells = fmt::format(",{},{},{}", q->width, q->height, issue_names(*q, ";"));
  for (store::ImageIssue issue : store::kAllImageIssues) {
    const std::optional<double> score = q->score(issue);
    cells += score ? fmt::format(",{}", *score) : std::string(",");
  }
  return cells;
}

// {"width", "height", "issues": [names], "scores": {name: score or null}}, or null.
nlohmann::json image_quality_json(const std::optional<store::ImageQualityRecord>& q) {
  using nlohmann::json;
  if (!q) return nullptr;
  json issues = json::array();
  json scores = json::object();
  for (store::ImageIssue issue : store::kAllImageIssues) {
    if (q->has(issue)) issues.push_back(to_string(issue));
    const std::optional<double> score = q->score(issue);
    scores[to_string(issue)] = score ? json(*score) : json(nullptr);
  }
  return {{"width", q->width}, {"height", q->height}, {"issues", issues}, {"scores", scores}};
}

// Per annotated sample: its annotation count and majority label, and the
// Dawid-Skene consensus over the whole store's annotations (review/
// consensus_labels.h), what `rejudge --consensus` would give it.
struct AnnotationSummary {
  std::int64_t count = 0;
  std::int64_t majority = 0;
  std::optional<std::int64_t> consensus;
  double posterior = 0.0;
};

std::map<std::int64_t, AnnotationSummary> annotation_summaries(store::MetadataStore& store) {
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> votes;  // sample -> label -> votes
  store.for_each_annotation(
      [&](const store::MetadataStore::AnnotationRow& a) { ++votes[a.sample_id][a.label]; });
  std::map<std::int64_t, AnnotationSummary> out;
  if (votes.empty()) return out;
  for (const auto& [id, by_label] : votes) {
    AnnotationSummary& s = out[id];
    for (const auto& [label, n] : by_label) s.count += n;
    s.majority = *curation::labels::majority_label(by_label);  // as at import
  }
  const curation::review::ConsensusLabels consensus = curation::review::consensus_labels(store);
  for (const auto& [id, c] : consensus.by_sample) {
    if (auto it = out.find(id); it != out.end()) {
      it->second.consensus = c.label;
      it->second.posterior = c.posterior;
    }
  }
  return out;
}

nlohmann::json annotations_json(const AnnotationSummary* a, const curation::LabelNames& names) {
  if (a == nullptr) return nullptr;
  return {{"count", a->count},
          {"majority", names.name_of(a->majority)},
          {"consensus",
           a->consensus ? nlohmann::json(names.name_of(*a->consensus)) : nlohmann::json(nullptr)},
          {"posterior", a->consensus ? nlohmann::json(a->posterior) : nlohmann::json(nullptr)}};
}

std::string annotations_csv(const AnnotationSummary* a, const curation::LabelNames& names) {
  if (a == nullptr) return ",,,,";
  return fmt::format(",{},{},{},{}", a->count, csv_field(names.name_of(a->majority)),
                     a->consensus ? csv_field(names.name_of(*a->consensus)) : "",
                     a->consensus ? fmt::format("{}", a->posterior) : "");
}

// What a training run learned about the sample (winnow import-training), or null.
nlohmann::json training_json(const std::optional<store::TrainingStats>& t,
                             const curation::LabelNames& names) {
  if (!t) return nullptr;
  return {{"run", t->run},
          {"seen", t->seen},
          {"mean_loss", t->mean_loss},
          {"loss_trend", t->loss_trend},
          {"last_loss", t->last_loss},
          {"last_epoch", t->last_epoch},
          {"predicted",
           t->predicted ? nlohmann::json(names.name_of(*t->predicted)) : nlohmann::json(nullptr)}};
}

// A person's verdict on the sample (winnow review), or null.
nlohmann::json review_json(const store::ReviewRecord* r, const curation::LabelNames& names) {
  if (r == nullptr) return nullptr;
  return {{"verdict", std::string(to_string(r->verdict))},
          {"label", r->label ? nlohmann::json(names.name_of(*r->label)) : nlohmann::json(nullptr)},
          {"reviewer", r->reviewer},
          {"note", r->note},
          {"at", r->created_at}};
}

// The key of sample `id` (a duplicate's original), when there is one.
std::optional<std::string> key_of(store::MetadataStore& store,
                                  const std::optional<std::int64_t>& id) {
  if (!id) return std::nullopt;
  const std::optional<store::SampleRecord> original = store.find_sample(*id);
  return original ? std::optional(original->external_key) : std::nullopt;
}

// The dataset as it was at `revision` (store/sample_history.h): each sample
// that existed then, with the status, label and original it had, the
// revision that gave it those, and why.
int export_at_revision(curation::Dataset& dataset, std::int64_t revision,
                       const std::optional<store::SampleStatus>& filter, bool csv) {
  store::SampleHistory history(dataset.store().database());
  const std::int64_t now = history.revision();
  WINNOW_THROW_IF_NOT(revision >= 0 && revision <= now,
                      "--revision {}: {} is at revision {} (0 to {} can be exported)", revision,
                      dataset.store().database().path(), now, now);
  if (csv) std::cout << "id,key,label,status,duplicate_of,duplicate_of_key,revision,reason\n";
  history.for_each_at(revision, [&](const store::SampleState& s) {
    if (filter && s.status != *filter) return;
    const std::string label = s.label ? dataset.label_names().name_of(*s.label) : "";
    const std::optional<std::string> original_key = key_of(dataset.store(), s.duplicate_of);
    const std::string reason = history.reason_of(s);
    if (csv) {
      std::cout << s.sample_id << ',' << csv_field(s.external_key) << ',' << csv_field(label) << ','
                << to_string(s.status) << ','
                << (s.duplicate_of ? std::to_string(*s.duplicate_of) : "") << ','
                << csv_field(original_key.value_or("")) << ',' << s.revision << ','
                << csv_field(reason) << '\n';
      return;
    }
    using nlohmann::json;
    const json j = {{"id", s.sample_id},
                    {"key", s.external_key},
                    {"label", s.label ? json(label) : json(nullptr)},
                    {"status", std::string(to_string(s.status))},
                    {"duplicate_of", s.duplicate_of ? json(*s.duplicate_of) : json(nullptr)},
                    {"duplicate_of_key", original_key ? json(*original_key) : json(nullptr)},
                    {"revision", s.revision},
                    {"reason", reason}};
    std::cout << json_text(j) << '\n';
  });
  return 0;
}

// Every sample as it is now (or those of status `filter`), with its
// decision's reason, image-quality scores, a person's verdict, its
// annotations and its training statistics.
int export_now(curation::Dataset& dataset, const std::optional<store::SampleStatus>& filter,
               bool csv, bool details) {
  if (csv) {
    std::cout << "id,key,content_hash,label,source,status,duplicate_of,duplicate_of_key,"
                 "label_quality,gain,batch_id,created_at,reason,review,reviewer,annotations,"
                 "majority_label,consensus_label,consensus_posterior"
              << (details ? ",details" : "") << image_quality_csv_header() << "\n";
  }
  auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string(); };
  using nlohmann::json;
  // Looked up per sample while the samples' query is open: the same snapshot.
  store::ImageQualityTable image_quality(dataset.store().database());
  store::TrainingStatsTable training(dataset.store().database());
  std::map<std::int64_t, store::ReviewRecord> reviews;  // a person's verdicts: few
  for (store::ReviewRecord& r : dataset.store().reviews()) reviews[r.sample_id] = r;
  const std::map<std::int64_t, AnnotationSummary> annotated = annotation_summaries(dataset.store());
  dataset.store().for_each_sample_with_decision(
      [&](const store::SampleRecord& s, const store::MetadataStore::DecisionText& d) {
        const std::optional<store::ImageQualityRecord> quality = image_quality.find(s.id);
        const std::optional<store::TrainingStats> trained = training.find(s.id);
        const std::string label = s.label ? dataset.label_names().name_of(*s.label) : "";
        const std::optional<std::string> original_key = key_of(dataset.store(), s.duplicate_of);
        const auto review = reviews.find(s.id);
        const store::ReviewRecord* reviewed = review != reviews.end() ? &review->second : nullptr;
        const auto annotation = annotated.find(s.id);
        const AnnotationSummary* summary =
            annotation != annotated.end() ? &annotation->second : nullptr;
        if (csv) {
          std::cout << s.id << ',' << csv_field(s.external_key) << ',' << s.content_hash << ','
                    << csv_field(label) << ',' << csv_field(s.source) << ',' << to_string(s.status)
                    << ',' << opt(s.duplicate_of) << ',' << csv_field(original_key.value_or(""))
                    << ',' << opt(s.label_quality) << ',' << opt(s.gain) << ',' << opt(s.batch_id)
                    << ',' << s.created_at << ',' << csv_field(d.reason) << ','
                    << (reviewed ? to_string(reviewed->verdict) : "") << ','
                    << csv_field(reviewed ? reviewed->reviewer : "")
                    << annotations_csv(summary, dataset.label_names());
          if (details) std::cout << ',' << csv_field(d.details_json);
          std::cout << image_quality_csv(quality) << '\n';
          return;
        }
        json j = {{"id", s.id},
                  {"key", s.external_key},
                  {"content_hash", s.content_hash},
                  {"label", s.label ? json(label) : json(nullptr)},
                  {"source", s.source},
                  {"status", std::string(to_string(s.status))},
                  {"duplicate_of", s.duplicate_of ? json(*s.duplicate_of) : json(nullptr)},
                  {"duplicate_of_key", original_key ? json(*original_key) : json(nullptr)},
                  {"label_quality", s.label_quality ? json(*s.label_quality) : json(nullptr)},
                  {"gain", s.gain ? json(*s.gain) : json(nullptr)},
                  {"batch_id", s.batch_id ? json(*s.batch_id) : json(nullptr)},
                  {"created_at", s.created_at},
                  {"reason", d.reason},
                  {"image_quality", image_quality_json(quality)},
                  {"review", review_json(reviewed, dataset.label_names())},
                  {"annotations", annotations_json(summary, dataset.label_names())},
                  {"training", training_json(trained, dataset.label_names())}};
        if (details) {
          j["details"] =
              d.details_json.empty() ? json(nullptr) : json::parse(d.details_json, nullptr, false);
        }
        std::cout << json_text(j) << '\n';
      },
      filter);
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& parent) {
  struct Options {
    std::string db, only, format = "jsonl";
    bool details = false;
    std::optional<std::int64_t> revision;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("export", "print every sample (or one status) as JSONL or CSV");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--status", o->only,
                  "accepted|duplicate_exact|duplicate_near|label_issue|rejected");
  cmd->add_option("--format", o->format, "jsonl or csv")->capture_default_str();
  cmd->add_flag("--details", o->details,
                "also the decision's details (thresholds, similarities, neighbour counts) as "
                "a JSON object (in CSV: its JSON text)");
  cmd->add_option("--revision", o->revision,
                  "the dataset as it was at this revision (winnow status names the current one): "
                  "each sample's status, label and original then, the revision that gave them "
                  "and why")
      ->excludes("--details");
  cmd->footer("Example: winnow export --db data.db --status rejected --format csv");
  return {cmd, [o] {
            std::optional<store::SampleStatus> filter;
            if (!o->only.empty()) filter = store::parse_sample_status(o->only);
            WINNOW_THROW_IF_NOT(o->format == "jsonl" || o->format == "csv",
                                "--format '{}' is not jsonl or csv", o->format);
            curation::Dataset dataset(o->db, curation::OpenMode::read_only);
            const bool csv = o->format == "csv";
            if (o->revision) return export_at_revision(dataset, *o->revision, filter, csv);
            return export_now(dataset, filter, csv, o->details);
          }};
}

}  // namespace winnow::cli
