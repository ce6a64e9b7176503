// External sample id <-> FAISS internal (sequential) id map, with tombstones
// (private to winnow_index).
//
// FAISS indexes number their vectors 0..ntotal-1. winnow keeps the store's
// int64 sample ids itself instead of wrapping the index in an IndexIDMap,
// because IndexIDMap rejects the SearchParameters that carry the tombstone
// selector. Internal id i holds external id external_[i]; a tombstoned row
// keeps its slot (and its vector in FAISS) but leaves the lookup table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "io/byte_io.h"
#include "winnow/index/vector_index.h"

namespace winnow::index::detail {

class IdMap {
 public:
  std::size_t internal_count() const { return external_.size(); }
  std::size_t live_count() const { return lookup_.size(); }
  std::size_t tombstone_count() const { return external_.size() - lookup_.size(); }

  bool contains(std::int64_t external) const { return lookup_.count(external) != 0; }
  // Internal id of a live external id, or -1.
  std::int64_t find(std::int64_t external) const;
  std::int64_t external(std::int64_t internal) const {
    return external_[static_cast<std::size_t>(internal)];
  }
  bool is_dead(std::int64_t internal) const {
    const auto i = static_cast<std::size_t>(internal);
    return (dead_[i >> 3] >> (i & 7)) & 1u;
  }
  // One bit per internal id, set for tombstones (FAISS IDSelectorBitmap layout).
  const std::vector<std::uint8_t>& dead_bitmap() const { return dead_; }

  // Throws winnow::Error if an id is negative, already live, or repeated in
  // the batch.
  void check_new(std::size_t n, const std::int64_t* ids) const;
  // Appends ids as internal ids internal_count() .. internal_count()+n-1.
  // Call check_new first.
  void append(std::size_t n, const std::int64_t* ids);
  // Marks a live internal id as a tombstone.
  void tombstone(std::int64_t internal);
  // Tombstones the live ones among n external ids (others are ignored);
  // returns how many.
  std::size_t tombstone_all(std::size_t n, const std::int64_t* external_ids);
  // Removes rows for good and renumbers the later ones down, like
  // IndexFlatCodes::remove_ids does. `sorted_internal` is ascending, unique.
  void erase(const std::vector<std::int64_t>& sorted_internal);

  // Copies FAISS search output (`per_query` labels and similarities for each
  // of out.num_queries queries) into `out` as external ids, best first,
  // skipping empty slots (label -1) and tombstones.
  void collect_hits(const std::int64_t* labels, const float* similarities, std::size_t per_query,
                    SearchResults& out) const;

  std::vector<std::int64_t> live_external() const;
  std::vector<std::int64_t> live_internal() const;

  void write(ByteSink& out) const;
  static IdMap read(ByteReader& in);

 private:
  void rebuild_lookup();

  std::vector<std::int64_t> external_;
  std::vector<std::uint8_t> dead_;
  std::unordered_map<std::int64_t, std::int64_t> lookup_;
};

}  // namespace winnow::index::detail
