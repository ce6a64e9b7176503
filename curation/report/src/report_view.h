// The quality report's JSON (docs/report-schema.md) read into typed fields.
//
// Both renderers (report_html.cpp, report_markdown.cpp) start from this view,
// so the JSON is checked in one place: read_report_view throws winnow::Error
// naming the key path (e.g. "sources[2].accuracy_interval") of a documented
// key that is missing or has the wrong type. Statistics the schema allows to
// be null keep their `*_note` instead of a value.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "winnow/store/sample_status.h"

namespace winnow::curation::report {

// The sample statuses, in the order every table and chart shows them: the
// store's (store::kAllSampleStatuses).
inline constexpr std::size_t kStatusCount = store::kSampleStatusCount;
inline std::string status_name(std::size_t s) {
  return std::string(store::to_string(store::kAllSampleStatuses[s]));
}

// A number the schema allows to be null; `note` is the sibling `*_note`.
struct Statistic {
  std::optional<double> value;
  std::string note;
};

// Count per status (kStatusCount of them, in the store's order) and their total.
struct StatusCounts {
  std::array<std::int64_t, kStatusCount> by_status{};
  std::int64_t total = 0;

  // The count of one status by name ("label_issue"); 0 for an unknown name.
  std::int64_t of(std::string_view status) const {
    for (std::size_t s = 0; s < kStatusCount; ++s) {
      if (status == status_name(s)) {
        return by_status[s];
      }
    }
    return 0;
  }
};

// A K x K matrix with its row/column label names.
struct LabelMatrix {
  std::vector<std::string> class_names;
  std::vector<std::vector<double>> cells;  // cells[row][column]
};

struct DawidSkeneRun {
  std::int64_t iterations = 0;
  bool converged = false;
  Statistic final_change;
  double tolerance = 0.0;
  std::int64_t max_iterations = 0;
  std::int64_t items = 0;
  std::int64_t classes = 0;
};

struct DatasetView {
  std::int64_t samples = 0;
  StatusCounts by_status;  // total = samples
  Statistic duplicate_rate;
  Statistic label_issue_rate;
  std::int64_t labelled_samples = 0;
  std::int64_t annotations = 0;
  std::int64_t annotated_samples = 0;
  std::int64_t multiply_annotated_samples = 0;
  // By label name: nlohmann::json keeps an object's keys sorted.
  std::vector<std::pair<std::string, std::int64_t>> class_distribution;
  LabelMatrix class_confusion;  // rows = given label, columns = estimated true label (counts)
  Statistic health_score;
  Statistic krippendorff_alpha;
  std::int64_t krippendorff_alpha_samples = 0;
  Statistic fleiss_kappa;
  std::int64_t fleiss_kappa_samples = 0;
  std::optional<std::int64_t> fleiss_kappa_raters;
  std::optional<DawidSkeneRun> dawid_skene;
  std::string dawid_skene_note;  // why dawid_skene is null
  Statistic consensus_vs_majority;
  // Where the kNN label vote judges and abstains (label_check.line); empty
  // in a report without it.
  std::string label_check;
  // How the annotators' accuracies were estimated (annotator_accuracy.line);
  // empty in a report without annotations.
  std::string annotator_accuracy;
  std::int64_t label_conflicts = 0;
};

struct SourceView {
  std::string name;
  std::string kind;
  std::int64_t submitted = 0;
  std::int64_t labels = 0;
  Statistic estimated_accuracy;
  std::optional<std::array<double, 2>> accuracy_interval;  // 95% Wilson [low, high]
  std::string accuracy_interval_note;
  std::optional<LabelMatrix> confusion;  // rows = true class, columns = given label
  std::string confusion_note;
  Statistic agreement_with_consensus;
  Statistic cohen_kappa;
  Statistic label_issue_share;
  Statistic duplicate_share;
};

struct ClassView {
  std::string name;
  std::int64_t given = 0;
  std::int64_t label_issues = 0;
  std::int64_t inverse_label_issues = 0;
  Statistic label_noise;
  Statistic inverse_label_noise;
  Statistic label_quality_score;
  Statistic mean_label_quality;
};

struct ConfusedPairView {
  std::string a;
  std::string b;
  std::int64_t count = 0;
  Statistic joint_probability;
};

struct BatchView {
  std::int64_t id = 0;
  std::string file;
  std::string state;
  std::int64_t attempts = 0;
  std::string created_at;
  std::optional<std::string> finished_at;
  StatusCounts counts;
  StatusCounts cumulative;
};

// One issue's share among a group's decoded image files.
struct ImageIssueShare {
  std::string issue;  // "blurry", ...
  std::int64_t count = 0;
  double share = 0.0;
};

// The images of the dataset, a source or a class (`name`), and their issues,
// worst first.
struct ImageQualityGroupView {
  std::string name;
  std::int64_t images = 0;
  std::int64_t with_issues = 0;
  double share_with_issues = 0.0;
  std::vector<ImageIssueShare> issues;

  // The share of `issue` (0 when the group does not list it).
  double share_of(const std::string& issue) const;
};

struct ImageQualityView {
  ImageQualityGroupView dataset;               // name empty
  std::vector<ImageQualityGroupView> sources;  // worst first, as in the JSON
  std::vector<ImageQualityGroupView> classes;
};

// One class of the "training" section: what a run's losses say of its samples.
struct TrainingClassView {
  std::string name;
  std::int64_t samples = 0;
  double mean_loss = 0.0;
  std::int64_t above_threshold = 0;
  std::vector<std::string> hardest;  // keys, hardest first
};

struct TrainingView {
  std::int64_t samples = 0;
  double threshold = 0.0;
  std::vector<TrainingClassView> classes;  // largest mean loss first, as in the JSON
};

struct ReportView {
  std::int64_t schema_version = 0;
  std::string generated_at;
  std::string winnow_version;
  // The winnow versions that created the database and last wrote it (none: not recorded).
  std::optional<std::string> database_created_by, database_written_by;
  std::string database;
  DatasetView dataset;
  std::vector<SourceView> sources;  // worst first, as in the JSON
  std::vector<ClassView> classes;
  std::vector<ConfusedPairView> confused_pairs;
  std::vector<BatchView> batches;
  // Absent from reports written before image-quality issues existed.
  std::optional<ImageQualityView> image_quality;
  // Null or absent: no sample has training statistics (winnow import-training).
  std::optional<TrainingView> training;
};

ReportView read_report_view(const nlohmann::json& report);

// "created by winnow A, last written by winnow B" (or "winnow versions not
// recorded" for a database older than the record).
std::string database_versions_text(const ReportView& view);

}  // namespace winnow::curation::report
