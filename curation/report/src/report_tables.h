// The quality report's tables as plain text cells, shared by the HTML page and
// the Markdown summary so that both show the same figures, written the same
// way, with the same one-line meaning per column (docs/report-schema.md).
// Escaping is the renderers' job: cells hold raw text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_view.h"

namespace winnow::curation::report {

struct Cell {
  std::string text;      // what is shown; "n/a" for a null statistic
  std::string note;      // why the statistic is null ("" otherwise)
  bool numeric = false;  // right-aligned
};

struct Column {
  std::string header;
  std::string meaning;  // hover title in HTML, legend line in Markdown
};

struct Table {
  std::string id;     // HTML id, e.g. "table-sources"
  std::string title;  // section heading
  std::string intro;  // one sentence under the heading ("" for none)
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

// How numbers are written: counts with thousands separators, shares as
// percentages, coefficients with three decimals; null statistics as "n/a".
std::string format_count(std::int64_t count);
std::string format_percent(double share, int decimals = 1);
Cell count_cell(std::int64_t count);
Cell percent_cell(const Statistic& share, int decimals = 1);
Cell coefficient_cell(const Statistic& coefficient);
Cell text_cell(std::string text);

// A human name for a status key ("duplicate_near" -> "near duplicate").
std::string status_title(const std::string& status);

Table dataset_table(const ReportView& report);
Table class_distribution_table(const ReportView& report);
Table sources_table(const ReportView& report);
Table source_confusion_table(const SourceView& source);  // requires source.confusion
Table classes_table(const ReportView& report);
Table class_confusion_table(const ReportView& report);
Table confused_pairs_table(const ReportView& report);
Table batches_table(const ReportView& report);
// Image-quality issues per source / per class; both require report.image_quality.
Table image_issues_by_source_table(const ReportView& report);
Table image_issues_by_class_table(const ReportView& report);

// The "training" section (present only when report.training is).
Table training_table(const ReportView& report);

}  // namespace winnow::curation::report
