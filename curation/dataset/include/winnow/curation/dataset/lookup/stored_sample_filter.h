// StoredSampleFilter: whether the store may hold a sample with a given
// content hash or external key, answered from memory.
//
// An ingest looks up each record's content hash (an exact duplicate of a
// stored sample?) and key (ingested before?). Nearly every answer is "no",
// and in a large store each costs a search of a SQLite index, a share of
// every batch worth saving. The filter says "certainly not" for nearly all
// of them; the rest, and every sample that is stored, are still looked up in
// the store, so no decision changes.
//
// Samples are never deleted and their keys and hashes never change, so the
// filter catches up by id: before a batch it adds the samples with ids above
// the largest it has seen, whoever wrote them (another process too). The
// first catch-up reads every sample's key and hash, once per process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "winnow/store/metadata_store.h"

#include "winnow/curation/dataset/lookup/growing_bloom_filter.h"

namespace winnow::curation {

class StoredSampleFilter {
 public:
  // Adds the samples stored since the last call (all of them at the first).
  // Call inside the batch's transaction, so that none can be missed.
  void catch_up(store::MetadataStore& store);
  // Each takes dedup::hash64 of the content hash or key (the ingest has it
  // already, for its own sets).
  bool may_hold_content_hash(std::uint64_t content_hash64) const {
    return content_hashes_.may_contain(content_hash64);
  }
  bool may_hold_key(std::uint64_t external_key64) const {
    return keys_.may_contain(external_key64);
  }
  // Forgets every sample: the next catch_up reads them all again.
  void clear();
  std::size_t bytes() const { return content_hashes_.bytes() + keys_.bytes(); }

 private:
  GrowingBloomFilter content_hashes_;
  GrowingBloomFilter keys_;
  std::int64_t last_id_ = 0;  // every sample up to this id is in the filters
};

}  // namespace winnow::curation
