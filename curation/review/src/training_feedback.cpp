#include "winnow/curation/review/training_feedback.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/core/regular_file.h"
#include "winnow/curation/labels/label_text.h"
#include "winnow/curation/review/verdicts.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/transaction.h"

#include "confident_learning_reason.h"

namespace winnow::curation::review {

namespace {

constexpr std::size_t kListedUnknownKeys = 20;

template <typename T>
T field(const nlohmann::json& j, const char* name, const std::string& path, std::size_t line) {
  WINNOW_THROW_IF_NOT(j.contains(name) && j[name].is_number(),
                      "{}: line {}: \"{}\" must be a number", path, line, name);
  return j[name].get<T>();
}

// A label given as a name or a whole number, as its text; none otherwise.
std::optional<std::string> label_field(const nlohmann::json& j, const char* name) {
  if (!j.contains(name)) return std::nullopt;
  if (j[name].is_string()) return j[name].get<std::string>();
  if (j[name].is_number_integer()) return std::to_string(j[name].get<std::int64_t>());
  return std::nullopt;
}

TrainingRow row_of(std::string_view text, const std::string& path, std::size_t line) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_object(), "{}: line {}: not a JSON object", path, line);
  WINNOW_THROW_IF_NOT(
      j.contains("key") && j["key"].is_string() && !j["key"].get<std::string>().empty(),
      "{}: line {}: \"key\" must be a non-empty string", path, line);
  TrainingRow row;
  row.line = line;
  row.key = j["key"].get<std::string>();
  row.stats.seen = field<std::int64_t>(j, "seen", path, line);
  row.stats.mean_loss = field<double>(j, "mean_loss", path, line);
  row.stats.loss_trend = field<double>(j, "loss_trend", path, line);
  row.stats.last_loss = field<double>(j, "last_loss", path, line);
  row.stats.last_epoch = field<std::int64_t>(j, "last_epoch", path, line);
  row.label = label_field(j, "label");
  row.predicted = label_field(j, "predicted");
  WINNOW_THROW_IF_NOT(row.stats.seen >= 0 && std::isfinite(row.stats.mean_loss) &&
                          std::isfinite(row.stats.loss_trend) && std::isfinite(row.stats.last_loss),
                      "{}: line {}: a negative count or a loss that is not finite", path, line);
  return row;
}

}  // namespace

std::vector<TrainingRow> read_training_file(const std::string& path) {
  FileLimits limits;
  limits.max_bytes = kMaxTrainingFileBytes;
  limits.follow_links = true;  // the user's own file
  const std::vector<unsigned char> bytes = read_regular_file(path, limits, "training file");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<TrainingRow> rows;
  std::size_t line = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    const std::string_view content = text.substr(start, end - start);
    if (content.find_first_not_of(" \t\r") != std::string_view::npos) {
      rows.push_back(row_of(content, printable_text(path), line));
    }
    start = end + 1;
  }
  return rows;
}

namespace {

// Judges again the labels of the samples whose statistics were just stored.
void rejudge_by_training(Dataset& dataset, const std::vector<store::TrainingStats>& stats,
                         TrainingImport& report) {
  store::MetadataStore& store = dataset.store();
  const TrainingVerdicts verdicts(store);
  const std::set<std::int64_t> reviewed = reviewed_samples(store);
  for (const store::TrainingStats& s : stats) {  // each of a run on the sample's label now
    const std::optional<store::SampleRecord> sample = store.find_sample(s.sample_id);
    const bool judged = sample->status == store::SampleStatus::accepted ||
                        sample->status == store::SampleStatus::label_issue;
    if (!judged || !sample->label || reviewed.count(s.sample_id) > 0 || s.seen == 0) continue;
    const bool flag = verdicts.flags(s);
    const bool flagged_now = sample->status == store::SampleStatus::label_issue;
    if (flag == flagged_now) continue;
    if (flagged_now && decided_by_confident_learning(store, s.sample_id)) continue;
    const nlohmann::json details = {{"training",
                                     {{"run", s.run},
                                      {"seen", s.seen},
                                      {"mean_loss", s.mean_loss},
                                      {"loss_trend", s.loss_trend},
                                      {"threshold", verdicts.threshold()}}}};
    const std::string why = verdicts.why(s);
    store.update_status(
        s.sample_id,
        flag ? store::Decision{store::SampleStatus::label_issue, std::nullopt, why, details.dump()}
             : store::Decision{store::SampleStatus::accepted, std::nullopt,
                               "label issue cleared: " + why, details.dump()});
    ++(flag ? report.newly_flagged : report.cleared);
  }
}

}  // namespace

TrainingImport import_training(Dataset& dataset, const std::vector<TrainingRow>& rows,
                               const std::string& run) {
  TrainingImport report;
  store::MetadataStore& store = dataset.store();
  try {
    store::Transaction tx(store.database());
    dataset.sync_with_store();
    std::vector<store::TrainingStats> stats;
    for (const TrainingRow& row : rows) {
      const std::optional<store::SampleRecord> sample = store.find_by_external_key(row.key);
      if (!sample) {
        ++report.unknown;
        if (report.unknown_keys.size() < kListedUnknownKeys) report.unknown_keys.push_back(row.key);
        continue;
      }
      const std::string label_now =
          sample->label ? dataset.label_names().name_of(*sample->label) : std::string();
      if (row.label && labels::canonical_label(*row.label) != label_now) {
        ++report.other_label;  // trained on a label the sample no longer has
        continue;
      }
      store::TrainingStats s = row.stats;
      s.sample_id = sample->id;
      s.run = run;
      s.label = sample->label;
      if (row.predicted) {  // a class the dataset does not know is no vote
        s.predicted = dataset.label_names().find(labels::canonical_label(*row.predicted));
        report.unknown_predicted += !s.predicted.has_value();
      }
      stats.push_back(s);
    }
    if (stats.empty()) return report;  // nothing written: rolled back
    store::TrainingStatsTable(store.database()).put(stats);
    report.imported = static_cast<std::int64_t>(stats.size());
    rejudge_by_training(dataset, stats, report);
    report.revision = dataset.next_revision();
    store.record_writer();
    tx.commit();
    dataset.committed(report.revision);
  } catch (const std::exception&) {
    dataset.reopen_index();
    throw;
  }
  dataset.reload_accepted_labels();
  return report;
}

ExtraVoter training_voter(store::MetadataStore& store) {
  ExtraVoter voter{"(training run)", {}};
  store::TrainingStatsTable(store.database()).for_each([&](const store::TrainingStats& s) {
    if (s.predicted) voter.votes[s.sample_id] = *s.predicted;
  });
  return voter;
}

std::size_t training_classes(store::MetadataStore& store) {
  std::size_t classes = 0;
  for (const store::MetadataStore::LabelQualitySum& sum : store.label_quality_by_label()) {
    classes += sum.samples > 0;
  }
  return classes;
}

TrainingVerdicts::TrainingVerdicts(store::MetadataStore& store)
    : store_(store),
      rows_(store::TrainingStatsTable(store.database()).count()),
      classes_(rows_ > 0 ? std::max<std::size_t>(training_classes(store), 2) : 2),
      threshold_(training_loss_threshold(classes_)) {}

const std::optional<store::TrainingStats>& TrainingVerdicts::stats_of(std::int64_t id) const {
  if (id != last_id_) {
    last_ = store::TrainingStatsTable(store_.database()).find(id);
    last_id_ = id;
  }
  return last_;
}

std::optional<bool> TrainingVerdicts::flags(std::int64_t id, std::int64_t label) const {
  if (rows_ == 0) return std::nullopt;
  const std::optional<store::TrainingStats>& s = stats_of(id);
  if (!s || s->seen == 0 || s->label != label) return std::nullopt;
  return flags(*s);
}

std::string TrainingVerdicts::why(std::int64_t id) const {
  WINNOW_THROW_IF_NOT(stats_of(id).has_value(), "training verdicts: sample {} has no statistics",
                      id);
  return why(*stats_of(id));
}

std::string TrainingVerdicts::why(const store::TrainingStats& s) const {
  return fmt::format("mean training loss {:.3f} {} {:.3f} (ln {}) over {} losses, run {}",
                     s.mean_loss, s.mean_loss > threshold_ ? ">" : "<=", threshold_, classes_,
                     s.seen, s.run);
}

double training_loss_threshold(std::size_t classes) {
  return std::log(static_cast<double>(std::max<std::size_t>(classes, 2)));
}

}  // namespace winnow::curation::review
