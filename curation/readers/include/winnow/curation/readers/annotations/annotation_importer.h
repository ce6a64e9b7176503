// A labelling tool's export of annotations as one batch of records without
// content (`winnow import-annotations`, docs/annotations.md).
//
// The file is read whole, as a RegularFile (no symbolic link, no FIFO or
// device, at most max_bytes), and parsed by its format's reader
// (annotation_table.h); each item becomes one record of ContentKind::none
// whose key is the item, whose annotations are its rows (or Label Studio
// annotations) in file order, whose label is its gold label when the export
// gives one, and whose source is the item's own, else the options'. The
// pipeline then takes the majority of the annotations as the label of an item
// without gold, as for any record with annotations and no label, and accepts
// it without duplicate or neighbour checks (record_decision.h, rule 1a). An
// item the reader refused, or without annotations, is a rejection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "winnow/curation/readers/annotations/annotation_table.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/curation/core/regular_file.h"

namespace winnow::curation::readers {

enum class AnnotationFormat { csv, label_studio };

// "csv" or "label-studio".
const char* to_string(AnnotationFormat format);
// Inverse of to_string; throws winnow::Error naming `name` when unknown.
AnnotationFormat parse_annotation_format(const std::string& name);

struct AnnotationImportOptions {
  // Unset: .json files are Label Studio exports, any other is CSV.
  std::optional<AnnotationFormat> format;
  std::string source;          // of items that name none themselves; empty: none
  std::string choice_control;  // Label Studio: the choices control to read (its from_name)
  // The whole file is held in memory while it is read (a JSON export about
  // ten times over, as a document tree).
  FileLimits file{kDefaultMaxBytes, {}};
  static constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{256} << 20;  // 256 MiB
};

class AnnotationImporter {
 public:
  // Reads and parses `path`; throws winnow::Error naming the file (and the
  // line) when it cannot be read as its format at all.
  AnnotationImporter(const std::string& path, AnnotationImportOptions options);

  // The next item as a record, or a rejection; false after the last.
  bool next(ManifestEntry& entry);

  AnnotationFormat format() const { return format_; }
  std::size_t items() const { return table_.items().size(); }
  std::size_t annotations() const { return table_.annotations(); }
  const AnnotationTable& table() const { return table_; }
  // The batch's identity: the file's content hash and the options, so the
  // same export imported again is skipped (IngestPipeline::ingest_batch).
  const std::string& checksum() const { return checksum_; }

 private:
  AnnotationImportOptions options_;
  AnnotationFormat format_ = AnnotationFormat::csv;
  AnnotationTable table_;
  std::string checksum_;
  std::size_t next_ = 0;
  bool not_kept_reported_ = false;
};

}  // namespace winnow::curation::readers
