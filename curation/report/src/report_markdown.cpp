// The quality report as a GitHub-flavoured Markdown summary: the same tables
// as the HTML page (report_tables.h), each followed by a legend of its
// columns. Every string from the report is escaped, so a source name cannot
// break a table or inject HTML.
#include <string>

#include <fmt/format.h>

#include "winnow/curation/core/printable_text.h"
#include "report_tables.h"
#include "report_view.h"
#include "winnow/curation/report/report_render.h"

namespace winnow::curation::report {
namespace {

using report::Cell;
using report::Table;

// Backslash-escapes the ASCII punctuation that Markdown or a table would
// interpret (CommonMark allows escaping any of it), after control,
// bidirectional and zero-width characters are shown escaped (visible_text).
std::string escape(const std::string& raw) {
  static const std::string kSpecial = "\\`*_[]<>|&#!~";
  const std::string text = visible_text(raw);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      if (kSpecial.find(c) != std::string::npos) {
        out += '\\';
      }
      out += c;
    }
  }
  return out;
}

std::string cell_text(const Cell& cell) {
  return cell.note.empty() ? escape(cell.text) : escape(cell.text + " (" + cell.note + ")");
}

void write_table(std::string& out, const Table& table, const std::string& heading,
                 bool explain_columns) {
  out += fmt::format("{} {}\n\n", heading, escape(table.title));
  if (!table.intro.empty()) {
    out += escape(table.intro) + "\n\n";
  }
  if (table.rows.empty()) {
    out += "(none)\n\n";
    return;
  }
  std::string header = "|";
  std::string rule = "|";
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    header += " " + escape(table.columns[c].header) + " |";
    rule += table.rows.front()[c].numeric ? "--:|" : "---|";
  }
  out += header + "\n" + rule + "\n";
  for (const auto& row : table.rows) {
    std::string line = "|";
    for (const Cell& cell : row) {
      line += " " + cell_text(cell) + " |";
    }
    out += line + "\n";
  }
  out += "\n";
  if (explain_columns) {
    for (const auto& column : table.columns) {
      out += fmt::format("- **{}**: {}\n", escape(column.header), escape(column.meaning));
    }
    out += "\n";
  }
}

}  // namespace

std::string render_report_markdown(const nlohmann::json& json) {
  const report::ReportView view = report::read_report_view(json);
  std::string out = "# Annotation quality report\n\n";
  out += fmt::format("Database {} ({}) · generated {} by winnow {} (report schema {}).\n\n",
                     escape(view.database), escape(report::database_versions_text(view)),
                     escape(view.generated_at), escape(view.winnow_version), view.schema_version);

  write_table(out, report::dataset_table(view), "##", false);
  write_table(out, report::class_distribution_table(view), "##", true);
  write_table(out, report::sources_table(view), "##", true);
  for (const report::SourceView& source : view.sources) {
    if (source.confusion) {
      write_table(out, report::source_confusion_table(source), "###", false);
    }
  }
  write_table(out, report::classes_table(view), "##", true);
  write_table(out, report::class_confusion_table(view), "##", false);
  write_table(out, report::confused_pairs_table(view), "##", true);
  write_table(out, report::batches_table(view), "##", true);
  if (view.image_quality && view.image_quality->dataset.images > 0) {
    write_table(out, report::image_issues_by_source_table(view), "##", true);
    write_table(out, report::image_issues_by_class_table(view), "##", true);
  }
  if (view.training) write_table(out, report::training_table(view), "##", true);
  return out;
}

}  // namespace winnow::curation::report
