#include "report_view.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::curation::report {
namespace {

using nlohmann::json;

// One JSON object of the report and its key path, so that every error names
// the exact key ("dataset.by_status.accepted").
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    WINNOW_THROW_IF_NOT(object_.is_object(), "report key '{}' must be an object, got {}",
                        path_.empty() ? "(top level)" : path_, object_.type_name());
  }

  std::string path_of(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  const json& at(const std::string& key) const {
    const auto found = object_.find(key);
    WINNOW_THROW_IF_NOT(found != object_.end(), "report key '{}' is missing", path_of(key));
    return *found;
  }

  std::int64_t count(const std::string& key) const { return integer_at(at(key), path_of(key)); }

  std::optional<std::int64_t> optional_count(const std::string& key) const {
    const json& value = at(key);
    if (value.is_null()) {
      return std::nullopt;
    }
    return integer_at(value, path_of(key));
  }

  double number(const std::string& key) const { return number_at(at(key), path_of(key)); }

  bool flag(const std::string& key) const {
    const json& value = at(key);
    WINNOW_THROW_IF_NOT(value.is_boolean(), "report key '{}' must be a boolean, got {}",
                        path_of(key), value.type_name());
    return value.get<bool>();
  }

  std::string text(const std::string& key) const { return text_at(at(key), path_of(key)); }

  // A key added after schema version 1 first shipped: absent reads as null.
  std::optional<std::string> later_optional_text(const std::string& key) const {
    if (object_.find(key) == object_.end()) return std::nullopt;
    return optional_text(key);
  }

  std::optional<std::string> optional_text(const std::string& key) const {
    const json& value = at(key);
    if (value.is_null()) {
      return std::nullopt;
    }
    return text_at(value, path_of(key));
  }

  // A nullable statistic: a number, or null with an optional `<key>_note`.
  Statistic statistic(const std::string& key) const {
    Statistic out;
    const json& value = at(key);
    if (value.is_null()) {
      out.note = note(key);
    } else {
      out.value = number_at(value, path_of(key));
    }
    return out;
  }

  // The `<key>_note` string that explains a null `key` ("" when absent).
  std::string note(const std::string& key) const {
    const auto found = object_.find(key + "_note");
    if (found == object_.end() || found->is_null()) {
      return "";
    }
    return text_at(*found, path_of(key + "_note"));
  }

  Fields object(const std::string& key) const { return Fields(at(key), path_of(key)); }

  // The elements of a list, each with its path ("sources[3]").
  std::vector<std::pair<const json*, std::string>> list(const std::string& key) const {
    const json& value = at(key);
    WINNOW_THROW_IF_NOT(value.is_array(), "report key '{}' must be a list, got {}", path_of(key),
                        value.type_name());
    std::vector<std::pair<const json*, std::string>> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      out.emplace_back(&value[i], fmt::format("{}[{}]", path_of(key), i));
    }
    return out;
  }

  std::vector<std::string> texts(const std::string& key) const {
    std::vector<std::string> out;
    for (const auto& [element, path] : list(key)) {
      out.push_back(text_at(*element, path));
    }
    return out;
  }

  const json& raw() const { return object_; }

  static std::int64_t integer_at(const json& value, const std::string& path) {
    WINNOW_THROW_IF_NOT(value.is_number_integer(), "report key '{}' must be an integer, got {}",
                        path, value.type_name());
    return value.get<std::int64_t>();
  }

  static double number_at(const json& value, const std::string& path) {
    WINNOW_THROW_IF_NOT(value.is_number(), "report key '{}' must be a number, got {}", path,
                        value.type_name());
    const double number = value.get<double>();
    WINNOW_THROW_IF_NOT(std::isfinite(number), "report key '{}' must be finite", path);
    return number;
  }

  static std::string text_at(const json& value, const std::string& path) {
    WINNOW_THROW_IF_NOT(value.is_string(), "report key '{}' must be a string, got {}", path,
                        value.type_name());
    return value.get<std::string>();
  }

 private:
  const json& object_;
  std::string path_;
};

StatusCounts read_status_counts(const Fields& fields, bool with_total) {
  StatusCounts out;
  for (std::size_t s = 0; s < kStatusCount; ++s) {
    out.by_status[s] = fields.count(status_name(s));
  }
  if (with_total) {
    out.total = fields.count("total");
  }
  return out;
}

// The K x K matrix of numbers under `key` (K = number of class names).
std::vector<std::vector<double>> read_square_matrix(const Fields& fields, const std::string& key,
                                                    std::size_t size) {
  std::vector<std::vector<double>> rows;
  const auto elements = fields.list(key);
  WINNOW_THROW_IF_NOT(elements.size() == size,
                      "report key '{}' must have {} rows (one per class), "
                      "got {}",
                      fields.path_of(key), size, elements.size());
  for (const auto& [row, row_path] : elements) {
    WINNOW_THROW_IF_NOT(row->is_array() && row->size() == size,
                        "report key '{}' must be a list of {} numbers", row_path, size);
    std::vector<double> cells;
    for (std::size_t c = 0; c < size; ++c) {
      cells.push_back(Fields::number_at((*row)[c], fmt::format("{}[{}]", row_path, c)));
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

DatasetView read_dataset(const Fields& fields) {
  DatasetView out;
  out.samples = fields.count("samples");
  out.by_status = read_status_counts(fields.object("by_status"), false);
  out.by_status.total = out.samples;
  out.duplicate_rate = fields.statistic("duplicate_rate");
  out.label_issue_rate = fields.statistic("label_issue_rate");
  out.labelled_samples = fields.count("labelled_samples");
  out.annotations = fields.count("annotations");
  out.annotated_samples = fields.count("annotated_samples");
  out.multiply_annotated_samples = fields.count("multiply_annotated_samples");
  const Fields distribution = fields.object("class_distribution");
  for (const auto& [name, value] : distribution.raw().items()) {
    out.class_distribution.emplace_back(name, distribution.count(name));
  }
  const Fields confusion = fields.object("class_confusion");
  out.class_confusion.class_names = confusion.texts("class_names");
  out.class_confusion.cells =
      read_square_matrix(confusion, "counts", out.class_confusion.class_names.size());
  out.health_score = fields.statistic("health_score");
  if (fields.raw().contains("label_conflicts"))
    out.label_conflicts = fields.count("label_conflicts");
  if (fields.raw().contains("label_check") && fields.raw().at("label_check").is_object()) {
    out.label_check = fields.object("label_check").text("line");
  }
  if (fields.raw().contains("annotator_accuracy")) {
    out.annotator_accuracy = fields.object("annotator_accuracy").text("line");
  }
  out.krippendorff_alpha = fields.statistic("krippendorff_alpha");
  out.krippendorff_alpha_samples = fields.count("krippendorff_alpha_samples");
  out.fleiss_kappa = fields.statistic("fleiss_kappa");
  out.fleiss_kappa_samples = fields.count("fleiss_kappa_samples");
  out.fleiss_kappa_raters = fields.optional_count("fleiss_kappa_raters");
  if (fields.at("dawid_skene").is_null()) {
    out.dawid_skene_note = fields.note("dawid_skene");
  } else {
    const Fields run = fields.object("dawid_skene");
    DawidSkeneRun ds;
    ds.iterations = run.count("iterations");
    ds.converged = run.flag("converged");
    ds.final_change = run.statistic("final_change");
    ds.tolerance = run.number("tolerance");
    ds.max_iterations = run.count("max_iterations");
    ds.items = run.count("items");
    ds.classes = run.count("classes");
    out.dawid_skene = ds;
  }
  out.consensus_vs_majority = fields.statistic("consensus_vs_majority");
  return out;
}

SourceView read_source(const Fields& fields) {
  SourceView out;
  out.name = fields.text("name");
  out.kind = fields.text("kind");
  out.submitted = fields.count("submitted");
  out.labels = fields.count("labels");
  out.estimated_accuracy = fields.statistic("estimated_accuracy");
  const json& interval = fields.at("accuracy_interval");
  if (interval.is_null()) {
    out.accuracy_interval_note = fields.note("accuracy_interval");
  } else {
    const std::string path = fields.path_of("accuracy_interval");
    WINNOW_THROW_IF_NOT(interval.is_array() && interval.size() == 2,
                        "report key '{}' must be [low, high] or null", path);
    out.accuracy_interval = std::array<double, 2>{Fields::number_at(interval[0], path + "[0]"),
                                                  Fields::number_at(interval[1], path + "[1]")};
  }
  const std::vector<std::string> class_names = fields.texts("class_names");
  if (fields.at("confusion").is_null()) {
    out.confusion_note = fields.note("confusion");
  } else {
    out.confusion =
        LabelMatrix{class_names, read_square_matrix(fields, "confusion", class_names.size())};
  }
  out.agreement_with_consensus = fields.statistic("agreement_with_consensus");
  out.cohen_kappa = fields.statistic("cohen_kappa");
  out.label_issue_share = fields.statistic("label_issue_share");
  out.duplicate_share = fields.statistic("duplicate_share");
  return out;
}

ClassView read_class(const Fields& fields) {
  ClassView out;
  out.name = fields.text("class");
  out.given = fields.count("given");
  out.label_issues = fields.count("label_issues");
  out.inverse_label_issues = fields.count("inverse_label_issues");
  out.label_noise = fields.statistic("label_noise");
  out.inverse_label_noise = fields.statistic("inverse_label_noise");
  out.label_quality_score = fields.statistic("label_quality_score");
  out.mean_label_quality = fields.statistic("mean_label_quality");
  return out;
}

ConfusedPairView read_confused_pair(const Fields& fields) {
  return ConfusedPairView{fields.text("a"), fields.text("b"), fields.count("count"),
                          fields.statistic("joint_probability")};
}

BatchView read_batch(const Fields& fields) {
  BatchView out;
  out.id = fields.count("id");
  out.file = fields.text("file");
  out.state = fields.text("state");
  out.attempts = fields.count("attempts");
  out.created_at = fields.text("created_at");
  out.finished_at = fields.optional_text("finished_at");
  out.counts = read_status_counts(fields.object("counts"), true);
  out.cumulative = read_status_counts(fields.object("cumulative"), true);
  return out;
}

ImageQualityGroupView read_image_quality_group(const Fields& fields, bool named) {
  ImageQualityGroupView out;
  if (named) out.name = fields.text("name");
  out.images = fields.count("images");
  out.with_issues = fields.count("with_issues");
  out.share_with_issues = fields.number("share_with_issues");
  for (const auto& [element, path] : fields.list("issues")) {
    const Fields issue(*element, path);
    out.issues.push_back({issue.text("issue"), issue.count("count"), issue.number("share")});
  }
  return out;
}

TrainingView read_training(const Fields& fields) {
  TrainingView out;
  out.samples = fields.count("samples");
  out.threshold = fields.number("threshold");
  for (const auto& [element, path] : fields.list("classes")) {
    const Fields c(*element, path);
    TrainingClassView view{
        c.text("class"), c.count("samples"), c.number("mean_loss"), c.count("above_threshold"), {}};
    for (const auto& [hard, hard_path] : c.list("hardest")) {
      view.hardest.push_back(Fields(*hard, hard_path).text("key"));
    }
    out.classes.push_back(std::move(view));
  }
  return out;
}

ImageQualityView read_image_quality(const Fields& fields) {
  ImageQualityView out;
  out.dataset = read_image_quality_group(fields, false);
  for (const auto& [element, path] : fields.list("sources")) {
    out.sources.push_back(read_image_quality_group(Fields(*element, path), true));
  }
  for (const auto& [element, path] : fields.list("classes")) {
    out.classes.push_back(read_image_quality_group(Fields(*element, path), true));
  }
  return out;
}

}  // namespace

double ImageQualityGroupView::share_of(const std::string& issue) const {
  for (const ImageIssueShare& s : issues) {
    if (s.issue == issue) return s.share;
  }
  return 0.0;
}

ReportView read_report_view(const nlohmann::json& report) {
  const Fields top(report, "");
  ReportView out;
  out.schema_version = top.count("schema_version");
  WINNOW_THROW_IF_NOT(out.schema_version == 1,
                      "report key 'schema_version' is {}; this renderer reads version 1",
                      out.schema_version);
  out.generated_at = top.text("generated_at");
  out.winnow_version = top.text("winnow_version");
  out.database_created_by = top.later_optional_text("database_created_by");
  out.database_written_by = top.later_optional_text("database_written_by");
  out.database = top.text("database");
  out.dataset = read_dataset(top.object("dataset"));
  for (const auto& [element, path] : top.list("sources")) {
    out.sources.push_back(read_source(Fields(*element, path)));
  }
  for (const auto& [element, path] : top.list("classes")) {
    out.classes.push_back(read_class(Fields(*element, path)));
  }
  for (const auto& [element, path] : top.list("confused_pairs")) {
    out.confused_pairs.push_back(read_confused_pair(Fields(*element, path)));
  }
  for (const auto& [element, path] : top.list("batches")) {
    out.batches.push_back(read_batch(Fields(*element, path)));
  }
  // A key added after schema version 1 first shipped: absent reads as none.
  if (report.contains("image_quality")) {
    out.image_quality = read_image_quality(top.object("image_quality"));
  }
  if (report.contains("training") && !report["training"].is_null()) {
    out.training = read_training(top.object("training"));
  }
  return out;
}

std::string database_versions_text(const ReportView& view) {
  if (!view.database_created_by && !view.database_written_by) return "winnow versions not recorded";
  return fmt::format("created by winnow {}, last written by winnow {}",
                     view.database_created_by.value_or("(not recorded)"),
                     view.database_written_by.value_or("(not recorded)"));
}

}  // namespace winnow::curation::report
