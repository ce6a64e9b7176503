// TextSketchTable: the 20-byte sketch of every stored text sample's shingle
// set (table text_sketches, schema migration 6), written by ingest in the
// same transaction as the sample, read whole when an ingest process opens the
// store.
//
// A sketch lets near-duplicate verification rule a stored candidate out
// without reading its text (curation's TextSketch, text_sketch.h). A process
// that wrote a sample has its sketch in memory; without this table, every
// new `winnow ingest` process read the texts of the older candidates again,
// a large share of a batch's time in a big store. What the bits mean
// belongs to curation; the
// store keeps the shingle length they were made with, the set's size and the
// 128 filter bits.
//
// A row holds the sketches one write of ingest kept (a micro-batch's texts,
// and the stored texts its decisions first read), packed: a row per sketch
// would cost the writer, the thread that bounds two threads, an insert per
// text.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace winnow::store {

class Database;

struct StoredTextSketch {
  std::int64_t sample_id = 0;
  std::int64_t size = 0;  // shingles in the set
  std::array<std::uint64_t, 2> bits{};
};

class TextSketchTable {
 public:
  explicit TextSketchTable(Database& db) : db_(db) {}

  // Adds one row holding `sketches`, made with shingles of `shingle`
  // codepoints (nothing for none). Throws (naming the sample) for a sample id
  // below 1, a size that is negative or does not fit 32 bits, an empty filter
  // for a set of shingles, or a non-positive shingle; through Database::fail when the row cannot be
  // written.
  void add(std::int64_t shingle, const std::vector<StoredTextSketch>& sketches);
  // Every sketch made with `shingle`, row by row in the order they were
  // added, from one query; throws naming the row for one whose bytes are not
  // whole sketches or name no stored sample (an id below 1 or past the last),
  // and (kind corrupt) for one that does not match its checksum or holds an
  // empty filter for a set of shingles. A row ends with its checksum.
  void for_each(std::int64_t shingle, const std::function<void(const StoredTextSketch&)>& visit);

  // The bytes of one packed sketch: the sample id (8), the size (4), the bits (16).
  static constexpr std::size_t kPackedBytes = 28;

 private:
  Database& db_;
};

}  // namespace winnow::store
