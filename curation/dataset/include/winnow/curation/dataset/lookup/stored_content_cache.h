// StoredContentCache: the stored contents of near-duplicate candidates that
// an ingest process read from the store, kept across micro-batches and
// batches up to a byte budget, least recently used first out.
//
// Verification reads each record's stored candidates, up to ten a record on
// clustered data, and the same candidates come back again and again: most
// reads are of a sample the same process has read before, so keeping them
// saves store reads. A stored content never changes (samples are never deleted, and
// a status or an embedding changes without it), so the cache needs no
// invalidation except for a rolled-back batch, whose ids SQLite hands out
// again: clear() then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>

#include "winnow/store/vector_table.h"

namespace winnow::curation {

class StoredContentCache {
 public:
  explicit StoredContentCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The content of sample `id`, or null; valid until the next put() or clear().
  const store::StoredContent* find(std::int64_t id);
  // Keeps `content` as sample `id`'s (an id already kept is left as it is),
  // dropping the least recently used ones past the byte budget.
  void put(std::int64_t id, store::StoredContent content);
  void clear();
  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::int64_t id;
    store::StoredContent content;
    std::size_t cost;
  };
  // What an entry costs: the content's bytes and about what the list node,
  // the map node and the strings' headers take.
  static std::size_t cost(const store::StoredContent& content);

  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::int64_t, std::list<Entry>::iterator> by_id_;
};

}  // namespace winnow::curation
