// revise_label_issues: confident learning with external
// predicted probabilities, applied to the judged samples of the store.
//
// Who is judged: samples that are `accepted` or `label_issue` (duplicates and
// rejected samples were never judged on their label), have a label, and have
// a row in the table. The statistics (thresholds, joints) are computed over all
// of them together, whether kNN flagged them or not.
//
// What changes:
//   - a flagged `accepted` sample becomes `label_issue` (a revisit event with
//     confident learning's reason and details); it stays in the vector index,
//     which holds every judged sample, and keeps its vote;
//   - a flagged `label_issue` sample whose last reason was kNN's gets a revisit
//     event with confident learning's reason (its status stays);
//   - every judged sample's label_quality becomes confident learning's score.
// Confident learning only ever adds flags: a kNN label_issue it does not flag
// stays a label_issue, and so does a sample it flagged on an earlier run
// (`winnow rejudge --labels` re-judges kNN's flags; it leaves these alone).
#include <algorithm>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "winnow/curation/review/label_revision.h"
#include "winnow/curation/review/verdicts.h"
#include "winnow/store/metadata_store.h"
#include "winnow/error.h"
#include "winnow/store/transaction.h"

#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "confident_learning_reason.h"

namespace winnow::curation::review {

namespace {

struct JudgedSample {
  std::int64_t id = 0;
  store::SampleStatus status = store::SampleStatus::accepted;
  std::int64_t label = 0;
};

// The judged samples with a row, in id order, with their classes and rows.
struct JudgedRows {
  std::vector<JudgedSample> samples;
  std::vector<int> classes;  // class of samples[n]'s label
  std::vector<float> probs;  // samples.size() x num_classes
  std::size_t unused_rows = 0;
};

// Class name -> its column in the table; throws for too few or repeated names.
std::unordered_map<std::string, int> class_columns(const PredProbsTable& pred_probs) {
  const int num_classes = static_cast<int>(pred_probs.class_names.size());
  WINNOW_THROW_IF_NOT(num_classes >= 2,
                      "pred_probs: confident learning needs at least 2 classes, got {}",
                      num_classes);
  std::unordered_map<std::string, int> class_of_name;
  for (int j = 0; j < num_classes; ++j) {
    const std::string& name = pred_probs.class_names[static_cast<std::size_t>(j)];
    WINNOW_THROW_IF_NOT(class_of_name.emplace(name, j).second,
                        "pred_probs: class name '{}' appears twice", name);
  }
  return class_of_name;
}

// Every accepted or label_issue sample with a label and a row; throws for a
// label that is no class of the table or a row of the wrong width.
JudgedRows judged_rows(store::MetadataStore& store, const LabelNames& label_names,
                       const PredProbsTable& pred_probs,
                       const std::unordered_map<std::string, int>& class_of_name) {
  const auto num_classes = static_cast<int>(pred_probs.class_names.size());
  JudgedRows out;
  std::unordered_set<std::string> used;
  store.for_each_sample([&](const store::SampleRecord& s) {
    if (s.status != store::SampleStatus::accepted && s.status != store::SampleStatus::label_issue)
      return;
    if (!s.label) return;
    auto row = pred_probs.rows.find(s.external_key);
    if (row == pred_probs.rows.end()) return;
    const std::string name = label_names.name_of(*s.label);
    auto cls = class_of_name.find(name);
    WINNOW_THROW_IF_NOT(
        cls != class_of_name.end(),
        "pred_probs: sample '{}' has label '{}', which is not one of the {} classes",
        s.external_key, name, num_classes);
    WINNOW_THROW_IF_NOT(row->second.size() == static_cast<std::size_t>(num_classes),
                        "pred_probs: row of '{}' has {} probabilities, expected {}", s.external_key,
                        row->second.size(), num_classes);
    out.samples.push_back({s.id, s.status, *s.label});
    out.classes.push_back(cls->second);
    out.probs.insert(out.probs.end(), row->second.begin(), row->second.end());
    used.insert(s.external_key);
  });
  out.unused_rows = pred_probs.rows.size() - used.size();
  return out;
}

// The label_issue decision of the n-th judged sample, which confident
// learning flagged, with its reason and details.
store::Decision flagged_decision(std::size_t n, const JudgedRows& rows,
                                 const PredProbsTable& pred_probs,
                                 const labels::ConfidentLearningResult& r,
                                 const labels::ConfidentLearningOptions& options,
                                 const nlohmann::json& thresholds) {
  const auto num_classes = pred_probs.class_names.size();
  const char* score_name = options.quality == labels::LabelQualityMethod::self_confidence
                               ? "self-confidence"
                               : "normalized margin";
  const std::string& given = pred_probs.class_names[static_cast<std::size_t>(rows.classes[n])];
  const int predicted = r.predicted_label[n];
  const std::string& suggested = pred_probs.class_names[static_cast<std::size_t>(predicted)];
  const float* p = rows.probs.data() + n * num_classes;
  nlohmann::json details = {{"confident_learning",
                             {{"filter_by", to_string(options.filter_by)},
                              {"quality_method", to_string(options.quality)},
                              {"quality", r.label_quality[n]},
                              {"given", given},
                              {"suggested", suggested},
                              {"p_given", p[rows.classes[n]]},
                              {"p_suggested", p[predicted]},
                              {"thresholds", thresholds},
                              {"min_examples_per_class", options.min_examples_per_class},
                              {"frac_noise", options.frac_noise},
                              {"samples", r.num_samples},
                              {"num_label_issues", r.num_label_issues},
                              {"flagged", r.num_flagged()}}}};
  return store::Decision{
      store::SampleStatus::label_issue, std::nullopt,
      fmt::format("{} given {}, suggested {}, {} {:.3f} ({})", kConfidentLearningReason, given,
                  suggested, score_name, r.label_quality[n], to_string(options.filter_by)),
      details.dump()};
}

}  // namespace

LabelRevisionReport revise_label_issues(Dataset& dataset, const PredProbsTable& pred_probs,
                                        const labels::ConfidentLearningOptions& options,
                                        std::optional<std::int64_t> batch_id) {
  store::MetadataStore& store = dataset.store();
  AcceptedLabelCache& accepted = dataset.accepted_labels();
  const std::unordered_map<std::string, int> class_of_name = class_columns(pred_probs);
  const int num_classes = static_cast<int>(pred_probs.class_names.size());

  dataset.sync_with_store();  // another process may have changed the dataset

  // The judged samples with a row, in id order.
  LabelRevisionReport report;
  const JudgedRows rows = judged_rows(store, dataset.label_names(), pred_probs, class_of_name);
  const std::vector<JudgedSample>& judged = rows.samples;
  report.unused_rows = rows.unused_rows;
  for (const JudgedSample& j : judged) report.samples.push_back(j.id);
  if (judged.empty()) return report;

  report.result = labels::find_label_issues(rows.classes, rows.probs, num_classes, options);
  const labels::ConfidentLearningResult& r = report.result;

  // The thresholds used, reported with every decision.
  nlohmann::json thresholds = nlohmann::json::object();
  for (int j = 0; j < num_classes; ++j) {
    const auto column = static_cast<std::size_t>(j);
    thresholds[pred_probs.class_names[column]] = r.thresholds[column];
  }

  std::vector<store::SampleScore> qualities;
  qualities.reserve(judged.size());
  std::vector<std::pair<std::int64_t, store::Decision>> revisits;
  std::vector<std::size_t> newly_flagged;                           // positions in `judged`
  const std::set<std::int64_t> reviewed = reviewed_samples(store);  // a person decided: left alone
  for (std::size_t n = 0; n < judged.size(); ++n) {
    qualities.push_back({judged[n].id, r.label_quality[n]});
    if (!r.is_label_issue[n] || reviewed.count(judged[n].id) > 0) continue;
    if (judged[n].status == store::SampleStatus::label_issue) {
      // Already flagged: only kNN's flags get confident learning's reason.
      if (decided_by_confident_learning(store, judged[n].id)) continue;
      ++report.confirmed;
    } else {
      newly_flagged.push_back(n);
    }
    revisits.emplace_back(judged[n].id,
                          flagged_decision(n, rows, pred_probs, r, options, thresholds));
  }

  {
    store::Transaction tx(store.database());
    for (const auto& [id, decision] : revisits) store.update_status(id, decision, batch_id);
    store.set_label_qualities(qualities);
    const std::int64_t revision = dataset.next_revision();
    store.record_writer();
    tx.commit();
    dataset.committed(revision);
  }
  // The label counts hold accepted samples only; a flagged sample keeps its
  // vote (and its place in the index).
  report.newly_flagged = newly_flagged.size();
  for (std::size_t n : newly_flagged) accepted.flag(judged[n].id);
  return report;
}

}  // namespace winnow::curation::review
