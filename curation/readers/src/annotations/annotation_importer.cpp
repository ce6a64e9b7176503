#include "winnow/curation/readers/annotations/annotation_importer.h"

#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation::readers {

const char* to_string(AnnotationFormat format) {
  switch (format) {
    case AnnotationFormat::csv:
      return "csv";
    case AnnotationFormat::label_studio:
      return "label-studio";
  }
  return "unknown";
}

AnnotationFormat parse_annotation_format(const std::string& name) {
  for (AnnotationFormat f : {AnnotationFormat::csv, AnnotationFormat::label_studio}) {
    if (name == to_string(f)) return f;
  }
  WINNOW_THROW("unknown annotation format '{}' (expected csv or label-studio)",
               printable_text(name, 100));
}

AnnotationImporter::AnnotationImporter(const std::string& path, AnnotationImportOptions options)
    : options_(std::move(options)) {
  format_ = options_.format.value_or(std::filesystem::path(path).extension() == ".json"
                                         ? AnnotationFormat::label_studio
                                         : AnnotationFormat::csv);
  const std::vector<unsigned char> bytes =
      read_regular_file(path, options_.file, "annotation file");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const std::string name = printable_text(path);
  table_ = format_ == AnnotationFormat::csv
               ? read_annotation_csv(text, name)
               : read_label_studio_json(text, name, options_.choice_control);
  checksum_ = fmt::format("annotations:{}:{}\nsource={}\ncontrol={}", to_string(format_),
                          dedup::content_hash(ContentKind::path, bytes.data(), bytes.size()),
                          options_.source, options_.choice_control);
}

bool AnnotationImporter::next(ManifestEntry& entry) {
  if (next_ == table_.items().size()) {
    // The refusals past the table's limit, as one rejection that counts them.
    if (table_.refused_not_kept == 0 || not_kept_reported_) return false;
    not_kept_reported_ = true;
    entry = ManifestEntry{};
    entry.rejection = Rejection{
        table_.first_not_kept_line, "",
        fmt::format("{} more {}s refused past the first {}, counted here rather than stored one "
                    "by one; the first of them: {}",
                    table_.refused_not_kept, table_.unit, AnnotationTable::kMaxRefusedItems,
                    table_.first_not_kept),
        options_.source};
    return true;
  }
  AnnotatedItem& item = table_.items()[next_++];
  entry = ManifestEntry{};
  const std::string source = item.source.empty() ? options_.source : item.source;
  std::string refusal = std::move(item.refusal);
  if (refusal.empty() && item.annotations.empty()) {
    refusal = fmt::format("{} {}: no annotations (none, or all cancelled or without a choice)",
                          table_.unit, item.line);
  }
  if (!refusal.empty()) {
    entry.rejection = Rejection{item.line, item.key, std::move(refusal), source};
    return true;
  }
  ManifestRecord record;
  record.line = item.line;
  record.key = std::move(item.key);
  record.kind = ContentKind::none;
  record.label = std::move(item.gold);
  record.source = source;
  record.annotations = std::move(item.annotations);
  entry.record = std::move(record);
  return true;
}

}  // namespace winnow::curation::readers
