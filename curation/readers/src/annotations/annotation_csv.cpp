// read_annotation_csv: the long CSV of annotations (annotation_table.h).
#include <array>
#include <optional>

#include <fmt/format.h>

#include "winnow/curation/readers/annotations/annotation_table.h"
#include "winnow/curation/readers/annotations/csv_reader.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation::readers {

namespace {

// The columns read, each with the names a header may give it (crowd-kit's
// task/worker/label as well as item/annotator/label).
enum Column { kItem, kAnnotator, kLabel, kGold, kSource, kColumns };
constexpr std::array<std::array<const char*, 2>, kColumns> kNames = {{
    {"item", "task"},
    {"annotator", "worker"},
    {"label", nullptr},
    {"gold", nullptr},
    {"source", nullptr},
}};

using Positions = std::array<std::optional<std::size_t>, kColumns>;

// Where each column is in the header; throws naming a required one that is
// missing or a column named twice.
Positions header_positions(const std::vector<std::string>& header, const std::string& name) {
  Positions at;
  for (std::size_t p = 0; p < header.size(); ++p) {
    for (int c = 0; c < kColumns; ++c) {
      for (const char* n : kNames[static_cast<std::size_t>(c)]) {
        if (n == nullptr || header[p] != n) continue;
        WINNOW_THROW_IF_NOT(!at[static_cast<std::size_t>(c)],
                            "{}: line 1: column '{}' appears twice", name,
                            kNames[static_cast<std::size_t>(c)][0]);
        at[static_cast<std::size_t>(c)] = p;
      }
    }
  }
  for (int c : {kItem, kAnnotator, kLabel}) {
    WINNOW_THROW_IF_NOT(at[static_cast<std::size_t>(c)],
                        "{}: line 1: the header has no column '{}' (it needs item, annotator and "
                        "label, or crowd-kit's task, worker and label; found: {})",
                        name, kNames[static_cast<std::size_t>(c)][0],
                        printable_text(fmt::format("{}", fmt::join(header, ",")), 200));
  }
  return at;
}

}  // namespace

AnnotationTable read_annotation_csv(std::string_view text, const std::string& name) {
  CsvReader csv(text, name);
  std::vector<std::string> fields;
  WINNOW_THROW_IF_NOT(csv.next(fields),
                      "{}: empty file: expected a header line (item,annotator,label)", name);
  const Positions at = header_positions(fields, name);
  const std::size_t columns = fields.size();
  AnnotationTable table;
  while (csv.next(fields)) {
    const std::size_t line = csv.line();
    // Keys, names and labels are stored and printed as UTF-8 text: control
    // bytes and invalid UTF-8 are written as \xNN and a backslash as \\ (as
    // import-folder does), so that two different fields never read alike.
    const auto field = [&](Column c) {
      const std::optional<std::size_t> p = at[static_cast<std::size_t>(c)];
      return p && *p < fields.size() ? printable_key(fields[*p]) : std::string();
    };
    const std::string item = field(kItem);
    if (fields.size() != columns) {
      table.refuse(line, item,
                   fmt::format("{} fields where the header has {}", fields.size(), columns));
      continue;
    }
    const char* empty = item.empty()                ? "item"
                        : field(kAnnotator).empty() ? "annotator"
                        : field(kLabel).empty()     ? "label"
                                                    : nullptr;
    if (empty != nullptr) {
      table.refuse(line, item, fmt::format("empty {}", empty));
      continue;
    }
    table.add(line, item, {field(kAnnotator), field(kLabel)}, field(kGold), field(kSource));
  }
  return table;
}

}  // namespace winnow::curation::readers
