// The annotations of a labelling tool's export grouped by item, and the two
// readers that fill it: the long CSV most tools and crowd-kit use (one row
// per item and annotator) and Label Studio's JSON export (choices tasks).
// docs/annotations.md maps every column and field onto the records.
//
// What cannot be read at all (a missing column, malformed JSON, a quoted
// field never closed) throws winnow::Error (invalid_input) naming the file and
// the line; a bad row or task only refuses its item, with the line and what is
// wrong, and the import goes on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation::readers {

// One item of the export: a sample without content.
struct AnnotatedItem {
  std::string key;
  std::size_t line = 0;  // where it first appears: CSV line, Label Studio task number (1-based)
  std::vector<Annotation> annotations;  // in file order
  std::optional<std::string> gold;      // the label the export says is right
  std::string source;                   // empty: none given
  std::string refusal;                  // why it cannot be imported; empty: it can
};

class AnnotationTable {
 public:
  // An annotation of `item` read at `line`. `gold` and `source` may be empty
  // (not given); one that differs from the item's earlier one refuses it. An
  // annotator's later annotation of the same item replaces the earlier one
  // (each annotator votes once per item; counted in `repeated`).
  void add(std::size_t line, const std::string& item, Annotation annotation,
           const std::string& gold, const std::string& source);
  // Registers `item` (at its first appearance) without an annotation, e.g. a
  // Label Studio task whose annotations were all cancelled.
  AnnotatedItem& item(std::size_t line, const std::string& key);
  // Refuses `item` with "line L: reason" ("task L: reason" for Label
  // Studio; the first refusal is kept). An empty key is an item of its own.
  // Past kMaxRefusedItems items refused on sight, a new one is only counted
  // (refused_not_kept), so a file of millions of junk rows or tasks costs no
  // memory per row.
  void refuse(std::size_t line, const std::string& key, const std::string& reason);
  static constexpr std::size_t kMaxRefusedItems = 1000;
  std::size_t refused_not_kept = 0;
  std::string first_not_kept;  // the first of them: "line L: reason"
  std::size_t first_not_kept_line = 0;

  // Items in order of first appearance.
  const std::vector<AnnotatedItem>& items() const { return items_; }
  std::vector<AnnotatedItem>& items() { return items_; }
  std::size_t annotations() const { return annotations_; }  // kept: one per annotator and item

  // Annotations replaced by the same annotator's later one for the same item.
  std::size_t repeated = 0;
  // Annotations not imported (Label Studio): cancelled, or without a choice.
  std::size_t cancelled = 0;
  std::size_t without_choice = 0;

  // What a position counts: "line" (CSV) or "task" (Label Studio).
  const char* unit = "line";

 private:
  std::vector<AnnotatedItem> items_;
  std::unordered_map<std::string, std::size_t> index_;  // key -> items_
  std::size_t annotations_ = 0;
  std::size_t refused_items_ = 0;  // items that were new when refused
};

// The long CSV: a header naming the columns `item` (or `task`), `annotator`
// (or `worker`) and `label`, optionally `gold` and `source`, in any order
// (other columns are ignored), then one row per annotation. `name` (the
// file) appears in errors.
AnnotationTable read_annotation_csv(std::string_view text, const std::string& name);

// Label Studio's JSON export: an array of tasks, each with an `id` and its
// `annotations`, whose `result` holds the annotator's `choices`. With several
// choices controls per task, `control` names the one to read (its
// `from_name`); empty: the only one there is.
AnnotationTable read_label_studio_json(std::string_view text, const std::string& name,
                                       const std::string& control = {});

}  // namespace winnow::curation::readers
