#include "winnow/curation/readers/annotations/annotation_table.h"

#include <utility>

#include <fmt/format.h>

namespace winnow::curation::readers {

AnnotatedItem& AnnotationTable::item(std::size_t line, const std::string& key) {
  if (!key.empty()) {
    const auto found = index_.find(key);
    if (found != index_.end()) return items_[found->second];
    index_.emplace(key, items_.size());
  }
  AnnotatedItem& added = items_.emplace_back();
  added.key = key;
  added.line = line;
  return added;
}

void AnnotationTable::refuse(std::size_t line, const std::string& key, const std::string& reason) {
  const bool new_item = key.empty() || index_.find(key) == index_.end();
  if (new_item && refused_items_ >= kMaxRefusedItems) {
    if (refused_not_kept == 0) {
      first_not_kept = fmt::format("{} {}: {}", unit, line, reason);
      first_not_kept_line = line;
    }
    ++refused_not_kept;
    return;
  }
  if (new_item) ++refused_items_;
  AnnotatedItem& it = item(line, key);
  if (it.refusal.empty()) it.refusal = fmt::format("{} {}: {}", unit, line, reason);
}

void AnnotationTable::add(std::size_t line, const std::string& key, Annotation annotation,
                          const std::string& gold, const std::string& source) {
  AnnotatedItem& it = item(line, key);
  if (!gold.empty()) {
    if (it.gold && *it.gold != gold) {
      return refuse(
          line, key,
          fmt::format("gold label '{}' differs from the item's earlier '{}'", gold, *it.gold));
    }
    it.gold = gold;
  }
  if (!source.empty()) {
    if (!it.source.empty() && it.source != source) {
      return refuse(
          line, key,
          fmt::format("source '{}' differs from the item's earlier '{}'", source, it.source));
    }
    it.source = source;
  }
  // One vote per annotator and item: a later row of the same annotator
  // replaces the earlier one (a corrected label), and is counted as repeated.
  for (Annotation& earlier : it.annotations) {
    if (earlier.annotator == annotation.annotator) {
      earlier = std::move(annotation);
      ++repeated;
      return;
    }
  }
  it.annotations.push_back(std::move(annotation));
  ++annotations_;
}

}  // namespace winnow::curation::readers
