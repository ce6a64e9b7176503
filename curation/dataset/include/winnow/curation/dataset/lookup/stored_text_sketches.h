// StoredTextSketches: a TextSketch of each stored text sample an ingest
// process wrote or read, by sample id, kept for the process's life.
//
// On clustered data a text record's index neighbours pass the candidate gate
// by the dozen and nearly all of them fail verification, so reading their
// texts from the store would dominate the writer's time. A sketch rules most
// of them out without a read, and changes no decision (text_sketch.h; the
// rule: docs/curation.md, "Near-duplicate verifiers"). A sample's text never changes (samples
// are never deleted, and a status or an embedding changes without it), so a
// sketch stays true, except for a rolled-back batch, whose ids SQLite hands
// out again: clear() then.
//
// Kept densely by id (sample ids are SQLite rowids, handed out in order):
// 20 bytes per id up to the largest one kept, whether or not it is a text.
// The store keeps them too (store::TextSketchTable): a process starts with
// the sketch of every text a batch wrote or read since the store has had
// that table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "winnow/curation/dedup/text_sketch.h"

namespace winnow::curation {

class StoredTextSketches {
 public:
  // Sketches of shingles of `shingle` codepoints (the text verifier's).
  explicit StoredTextSketches(int shingle) : shingle_(shingle) {}
  int shingle() const { return shingle_; }

  // Keeps `sketch` as sample `id`'s; false when it cannot be kept (an id
  // below 1, or a set of 2^32 - 1 shingles or more).
  bool put(std::int64_t id, const dedup::TextSketch& sketch);
  // Drops sample `id`'s sketch, if any (its id now holds no text).
  void forget(std::int64_t id);
  // Sample `id`'s sketch, when one was kept.
  std::optional<dedup::TextSketch> find(std::int64_t id) const;
  void clear();
  std::size_t bytes() const;

 private:
  int shingle_;
  // By id: the filter bits, and the set size plus one (0: no sketch kept).
  std::vector<std::array<std::uint64_t, 2>> bits_;
  std::vector<std::uint32_t> size_plus_one_;
};

}  // namespace winnow::curation
