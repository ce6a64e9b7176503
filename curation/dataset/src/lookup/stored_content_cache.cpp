#include "winnow/curation/dataset/lookup/stored_content_cache.h"

#include <utility>

namespace winnow::curation {

std::size_t StoredContentCache::cost(const store::StoredContent& content) {
  constexpr std::size_t kOverhead = sizeof(Entry) + 2 * sizeof(void*) + 48;
  return kOverhead + content.kind.capacity() + content.bytes.capacity();
}

const store::StoredContent* StoredContentCache::find(std::int64_t id) {
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, it->second);
  return &it->second->content;
}

void StoredContentCache::put(std::int64_t id, store::StoredContent content) {
  if (by_id_.count(id) != 0) return;
  const std::size_t added = cost(content);
  if (added > max_bytes_) return;
  entries_.push_front({id, std::move(content), added});
  by_id_.emplace(id, entries_.begin());
  bytes_ += added;
  while (bytes_ > max_bytes_) {
    const Entry& last = entries_.back();
    bytes_ -= last.cost;
    by_id_.erase(last.id);
    entries_.pop_back();
  }
}

void StoredContentCache::clear() {
  entries_.clear();
  by_id_.clear();
  bytes_ = 0;
}

}  // namespace winnow::curation
