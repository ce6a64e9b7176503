#include "report_tables.h"

#include <cctype>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace winnow::curation::report {
namespace {

Cell null_cell(const std::string& note) {
  return Cell{"n/a", note, true};
}

std::string capitalized(std::string text) {
  if (!text.empty()) {
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  }
  return text;
}

// The status keys' meanings (docs/report-schema.md, `dataset.by_status`).
const char* status_meaning(const std::string& status) {
  if (status == "accepted") return "samples accepted into the dataset";
  if (status == "duplicate_exact") return "samples whose content hash equals an earlier sample's";
  if (status == "duplicate_near")
    return "samples whose embedding is too close to an earlier sample";
  if (status == "label_issue") return "samples whose label was judged wrong or too uncertain";
  return "samples the pipeline refused for any other reason";
}

// "0.492 (on 5,117 samples)", or "n/a" with the note.
Cell coefficient_on_samples(const Statistic& coefficient, std::int64_t samples) {
  Cell cell = coefficient_cell(coefficient);
  if (coefficient.value) {
    cell.text += fmt::format(" (on {} samples)", format_count(samples));
  }
  return cell;
}

Cell dawid_skene_cell(const DatasetView& dataset) {
  if (!dataset.dawid_skene) {
    return null_cell(dataset.dawid_skene_note);
  }
  const DawidSkeneRun& run = *dataset.dawid_skene;
  const std::string change =
      run.final_change.value ? fmt::format("{:.2g}", *run.final_change.value) : std::string("n/a");
  return text_cell(
      fmt::format("{} after {} of at most {} iterations (final change {}, tolerance {:.2g}); {} "
                  "items, {} classes",
                  run.converged ? "converged" : "NOT converged", run.iterations, run.max_iterations,
                  change, run.tolerance, format_count(run.items), format_count(run.classes)));
}

Cell interval_cell(const SourceView& source) {
  if (!source.accuracy_interval) {
    return null_cell(source.accuracy_interval_note);
  }
  const auto [low, high] = *source.accuracy_interval;
  return Cell{fmt::format("{:.1f}–{:.1f}%", 100.0 * low, 100.0 * high), "", true};
}

}  // namespace

std::string format_count(std::int64_t count) {
  const std::string digits = std::to_string(count < 0 ? -count : count);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return count < 0 ? "-" + out : out;
}

std::string format_percent(double share, int decimals) {
  return fmt::format("{:.{}f}%", 100.0 * share, decimals);
}

Cell count_cell(std::int64_t count) {
  return Cell{format_count(count), "", true};
}

Cell percent_cell(const Statistic& share, int decimals) {
  return share.value ? Cell{format_percent(*share.value, decimals), "", true}
                     : null_cell(share.note);
}

Cell coefficient_cell(const Statistic& coefficient) {
  return coefficient.value ? Cell{fmt::format("{:.3f}", *coefficient.value), "", true}
                           : null_cell(coefficient.note);
}

Cell text_cell(std::string text) {
  return Cell{std::move(text), "", false};
}

std::string status_title(const std::string& status) {
  if (status == "duplicate_exact") return "exact duplicate";
  if (status == "duplicate_near") return "near duplicate";
  if (status == "label_issue") return "label issue";
  return status;
}

Table dataset_table(const ReportView& report) {
  const DatasetView& d = report.dataset;
  Table table{"table-dataset",
              "Dataset",
              "",
              {{"Figure", "the whole-dataset figure"},
               {"Value", "its value in this store"},
               {"Meaning", "its definition (docs/report-schema.md)"}},
              {}};
  auto add = [&table](std::string figure, Cell value, std::string meaning) {
    table.rows.push_back(
        {text_cell(std::move(figure)), std::move(value), text_cell(std::move(meaning))});
  };
  add("Samples", count_cell(d.samples), "samples in the store (every status)");
  for (std::size_t s = 0; s < kStatusCount; ++s) {
    Cell cell = count_cell(d.by_status.by_status[s]);
    if (d.samples > 0) {
      cell.text += " (" +
                   format_percent(static_cast<double>(d.by_status.by_status[s]) /
                                  static_cast<double>(d.samples)) +
                   ")";
    }
    add(capitalized(status_title(status_name(s))), cell, status_meaning(status_name(s)));
  }
  add("Duplicate rate", percent_cell(d.duplicate_rate),
      "(exact + near duplicates) / (samples − rejected)");
  add("Label-issue rate", percent_cell(d.label_issue_rate),
      "label issues / labelled samples that were judged (not rejected, not duplicates)");
  add("Health score", coefficient_cell(d.health_score),
      "cleanlab's overall label health score: share of judged labelled samples whose given label "
      "equals the estimated true label (trace of the joint)");
  add("Label conflicts", count_cell(d.label_conflicts),
      "duplicates (exact or near) whose label differs from their original's");
  if (!d.label_check.empty()) {
    add("Label check", text_cell(d.label_check),
        "where the kNN label vote judges and where it abstains: a class whose neighbours agree "
        "with its labels by less than the dataset's min_lift over chance gets no label issue "
        "from it (docs/curation.md)");
  }
  add("Labelled samples", count_cell(d.labelled_samples),
      "samples with a label, excluding rejected and duplicates");
  add("Annotations", count_cell(d.annotations), "(sample, annotator, label) rows in the store");
  add("Annotated samples", count_cell(d.annotated_samples), "samples with at least one annotation");
  if (!d.annotator_accuracy.empty()) {
    add("Annotator accuracy", text_cell(d.annotator_accuracy),
        "what the Sources table's estimated accuracy comes from: the last rejudge --consensus "
        "while the annotations are unchanged since, else Dawid-Skene over the annotations alone");
  }
  add("Multiply-annotated samples", count_cell(d.multiply_annotated_samples),
      "samples with two or more annotations");
  add("Krippendorff's α",
      coefficient_on_samples(d.krippendorff_alpha, d.krippendorff_alpha_samples),
      "nominal α over all samples with ≥ 2 annotations (1 = perfect agreement, 0 = chance)");
  Cell fleiss = coefficient_on_samples(d.fleiss_kappa, d.fleiss_kappa_samples);
  if (d.fleiss_kappa.value && d.fleiss_kappa_raters) {
    fleiss.text += fmt::format(", {} raters each", *d.fleiss_kappa_raters);
  }
  add("Fleiss' κ", fleiss,
      "over the multiply-annotated samples, only when all have the same number of annotations");
  add("Dawid-Skene", dawid_skene_cell(d),
      "the EM run that estimates consensus labels and each annotator's confusion matrix");
  add("Consensus ≠ majority", percent_cell(d.consensus_vs_majority),
      "share of multiply-annotated samples where the Dawid-Skene consensus differs from the "
      "plain majority vote");
  return table;
}

Table class_distribution_table(const ReportView& report) {
  Table table{"table-class-distribution",
              "Class distribution",
              "Labelled samples per given label.",
              {{"Class", "label name"},
               {"Samples", "labelled samples with that (given) label"},
               {"Share", "its share of the labelled samples listed here"}},
              {}};
  std::int64_t total = 0;
  for (const auto& entry : report.dataset.class_distribution) {
    total += entry.second;
  }
  for (const auto& [name, count] : report.dataset.class_distribution) {
    Statistic share;
    if (total > 0) {
      share.value = static_cast<double>(count) / static_cast<double>(total);
    }
    table.rows.push_back({text_cell(name), count_cell(count), percent_cell(share)});
  }
  return table;
}

Table sources_table(const ReportView& report) {
  Table table{"table-sources",
              "Sources",
              "Sources and annotators, worst estimated accuracy first: the first rows are the "
              "ones to question before paying for more of their labels.",
              {{"Source", "source or annotator name"},
               {"Kind", "source (submits samples), annotator (labels them) or both"},
               {"Submitted", "samples whose record named it as source"},
               {"Labels",
                "annotations it gave (for a source without annotations: the record "
                "labels of its samples)"},
               {"Est. accuracy",
                "Dawid-Skene expected accuracy Σ_c p[c]·e[c,c], as the last consensus estimated it "
                "(see Annotator accuracy)"},
               {"95% interval", "Wilson interval of the estimated accuracy with n = labels"},
               {"Agreement", "share of its labels equal to the sample's consensus label"},
               {"Cohen's κ", "between its labels and the consensus labels of the same samples"},
               {"Label issues", "share of its labelled samples whose status is label issue"},
               {"Duplicates", "share of its submitted samples that were exact or near duplicates"}},
              {}};
  for (const SourceView& s : report.sources) {
    table.rows.push_back({text_cell(s.name), text_cell(s.kind), count_cell(s.submitted),
                          count_cell(s.labels), percent_cell(s.estimated_accuracy),
                          interval_cell(s), percent_cell(s.agreement_with_consensus),
                          coefficient_cell(s.cohen_kappa), percent_cell(s.label_issue_share),
                          percent_cell(s.duplicate_share)});
  }
  return table;
}

Table source_confusion_table(const SourceView& source) {
  const LabelMatrix& matrix = *source.confusion;
  Table table{"",
              "Confusion matrix of " + source.name,
              "Rows: true class c; columns: given label k; cell: P(label k | true class c), "
              "estimated by Dawid-Skene.",
              {{"true \\ given", "true class (row) and the label this source gave (column)"}},
              {}};
  for (const std::string& name : matrix.class_names) {
    table.columns.push_back({name, "given label " + name});
  }
  for (std::size_t r = 0; r < matrix.cells.size(); ++r) {
    std::vector<Cell> row{text_cell(matrix.class_names[r])};
    for (const double p : matrix.cells[r]) {
      row.push_back(Cell{format_percent(p), "", true});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table classes_table(const ReportView& report) {
  Table table{"table-classes",
              "Classes",
              "cleanlab's classes_by_label_quality, worst label quality first. ỹ is the given "
              "label, y* the estimated true label (consensus, else the neighbour vote's "
              "suggestion, else ỹ).",
              {{"Class", "label name k"},
               {"Given", "samples with ỹ = k"},
               {"Label issues", "samples with ỹ = k and y* ≠ k"},
               {"Inverse issues", "samples with ỹ ≠ k and y* = k"},
               {"Label noise", "P(y* ≠ k | ỹ = k) = label issues / given"},
               {"Inverse noise", "P(ỹ ≠ k | y* = k) = inverse issues / samples with y* = k"},
               {"Quality score", "label quality score: 1 − label noise"},
               {"Mean quality", "mean stored label-quality score of its samples"}},
              {}};
  for (const ClassView& c : report.classes) {
    table.rows.push_back({text_cell(c.name), count_cell(c.given), count_cell(c.label_issues),
                          count_cell(c.inverse_label_issues), percent_cell(c.label_noise),
                          percent_cell(c.inverse_label_noise),
                          coefficient_cell(c.label_quality_score),
                          coefficient_cell(c.mean_label_quality)});
  }
  return table;
}

Table class_confusion_table(const ReportView& report) {
  const LabelMatrix& matrix = report.dataset.class_confusion;
  Table table{"table-class-confusion",
              "Class confusion",
              "Rows: given label ỹ; columns: estimated true label y*; cell: judged labelled "
              "samples. Off-diagonal cells are the label issues.",
              {{"given \\ true", "given label (row) and estimated true label (column)"}},
              {}};
  for (const std::string& name : matrix.class_names) {
    table.columns.push_back({name, "estimated true label " + name});
  }
  for (std::size_t r = 0; r < matrix.cells.size(); ++r) {
    std::vector<Cell> row{text_cell(matrix.class_names[r])};
    for (const double count : matrix.cells[r]) {
      row.push_back(count_cell(std::llround(count)));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table confused_pairs_table(const ReportView& report) {
  Table table{"table-confused-pairs",
              "Most confused class pairs",
              "Pairs of classes whose given and estimated true labels disagree most often.",
              {{"Class a", "one label of the pair (a < b)"},
               {"Class b", "the other label"},
               {"Samples", "samples with {ỹ, y*} = {a, b}"},
               {"Joint probability", "samples / judged labelled samples (cleanlab's Q_ab + Q_ba)"}},
              {}};
  for (const ConfusedPairView& pair : report.confused_pairs) {
    table.rows.push_back({text_cell(pair.a), text_cell(pair.b), count_cell(pair.count),
                          percent_cell(pair.joint_probability, 2)});
  }
  return table;
}

Table batches_table(const ReportView& report) {
  Table table{"table-batches",
              "Ingest batches",
              "One row per ingest batch, in id order.",
              {{"Batch", "ingest batch id"},
               {"File", "the manifest it ingested"},
               {"State", "pending, running, done or failed"},
               {"Attempts", "times the batch was started"},
               {"Created", "when the batch was queued (UTC)"},
               {"Finished", "when it finished (UTC); n/a while not done"}},
              {}};
  for (std::size_t s = 0; s < kStatusCount; ++s) {
    const std::string status = status_name(s);
    table.columns.push_back({capitalized(status_title(status)),
                             std::string(status_meaning(status)) + ", from this batch"});
  }
  table.columns.push_back({"Total", "samples from this batch"});
  table.columns.push_back({"Cumulative", "samples from all batches up to and including this one"});
  for (const BatchView& b : report.batches) {
    std::vector<Cell> row{
        count_cell(b.id),
        text_cell(b.file),
        text_cell(b.state),
        count_cell(b.attempts),
        text_cell(b.created_at),
        b.finished_at ? text_cell(*b.finished_at) : null_cell("the batch has not finished")};
    for (const std::int64_t count : b.counts.by_status) {
      row.push_back(count_cell(count));
    }
    row.push_back(count_cell(b.counts.total));
    row.push_back(count_cell(b.cumulative.total));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace winnow::curation::report

namespace winnow::curation::report {

namespace {

// What each image-quality issue means, one line (docs/images.md has the scores).
std::string image_issue_meaning(const std::string& issue) {
  if (issue == "blurry") return "share of its images with little edge sharpness";
  if (issue == "dark") return "share of its images whose brightest tones are dim";
  if (issue == "bright") return "share of its images whose darkest tones are light";
  if (issue == "low_information") return "share of its nearly uniform images";
  if (issue == "grayscale") return "share of its grey images (judged in a colour set only)";
  if (issue == "odd_aspect_ratio") return "share of its images far from square";
  if (issue == "odd_size") return "share of its images far from the dataset's median size";
  return "share of its images with this issue";
}

// Rows = groups (worst first), columns = the dataset's issues, worst first.
Table image_issues_table(const ReportView& report, bool by_source) {
  const ImageQualityView& quality = *report.image_quality;
  const ImageQualityGroupView& all = quality.dataset;
  Table table{by_source ? "table-image-issues-sources" : "table-image-issues-classes",
              by_source ? "Image-quality issues per source" : "Image-quality issues per class",
              fmt::format("{} of {} decoded image files have an image-quality issue ({}); rows "
                          "worst first, issues worst first.",
                          format_count(all.with_issues), format_count(all.images),
                          format_percent(all.share_with_issues)),
              {{by_source ? "Source" : "Class",
                by_source ? "the source named by its records" : "the sample's label"},
               {"Images", "its decoded image files, whatever their status"},
               {"Any issue", "share of its images with at least one issue"}},
              {}};
  for (const ImageIssueShare& issue : all.issues) {
    table.columns.push_back({issue.issue, image_issue_meaning(issue.issue)});
  }
  for (const ImageQualityGroupView& group : by_source ? quality.sources : quality.classes) {
    std::vector<Cell> row{text_cell(group.name), count_cell(group.images),
                          Cell{format_percent(group.share_with_issues), "", true}};
    for (const ImageIssueShare& issue : all.issues) {
      row.push_back(Cell{format_percent(group.share_of(issue.issue)), "", true});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace

Table image_issues_by_source_table(const ReportView& report) {
  return image_issues_table(report, true);
}

Table image_issues_by_class_table(const ReportView& report) {
  return image_issues_table(report, false);
}

Table training_table(const ReportView& report) {
  const TrainingView& training = *report.training;
  Table table{"table-training",
              "What training found, per class",
              fmt::format("{} samples have a training run's statistics; the label check flags "
                          "those whose mean training loss is above {:.3f}. Classes hardest first.",
                          format_count(training.samples), training.threshold),
              {{"Class", "the sample's label"},
               {"Samples", "judged samples with statistics of a run on their label"},
               {"Mean loss", "the mean of their mean training losses"},
               {"Above threshold", "samples the training statistics flag"},
               {"Hardest", "the keys of the samples with the highest mean loss"}},
              {}};
  for (const TrainingClassView& c : training.classes) {
    std::string hardest;
    for (const std::string& key : c.hardest) hardest += (hardest.empty() ? "" : ", ") + key;
    table.rows.push_back({text_cell(c.name), count_cell(c.samples),
                          Cell{fmt::format("{:.3f}", c.mean_loss), "", true},
                          count_cell(c.above_threshold), text_cell(hardest)});
  }
  return table;
}

}  // namespace winnow::curation::report
