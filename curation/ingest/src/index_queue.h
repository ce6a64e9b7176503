// IndexQueue: the judged vectors an ingest batch has written but its index
// does not hold yet. A search block's flushed vectors wait while the block
// after it is decided (that block was searched without them: fold_into adds
// them to its results, scored exactly), and join the index at the start of
// the preparation of the block after next, on the pool (join), while no
// search of the index runs (docs/ingest.md, "Order of decisions").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "winnow/curation/core/thread_pool.h"
#include "winnow/index/vector_index.h"

namespace winnow::curation::ingest {

class IndexQueue {
 public:
  // A flushed judged vector of the block being decided, with its home cell
  // (the first cell its own search scanned; kAnyCell without).
  void add(std::int64_t id, const std::vector<float>& vector, std::uint32_t home);

  // The block being decided ends: its vectors wait for join.
  void end_block();
  // The vectors of the block before the one being decided join `index`,
  // once (later calls do nothing until the next end_block).
  void join(index::VectorIndex& index);

  // Adds to each row of `found` (a chunk's `rows` queries at `queries`) the
  // vectors not in the index, those of the block before and of this block
  // so far, as fold_in does (prepared_chunk.h). Returns whether any were.
  bool fold_into(index::SearchResults& found, std::size_t rows, const float* queries,
                 std::size_t dim, std::size_t k, const ThreadPool& pool) const;

  // Seconds spent in join adding vectors to the index.
  double add_seconds() const { return add_seconds_; }

 private:
  struct Vectors {
    std::vector<std::int64_t> ids;
    std::vector<float> vectors;
    std::vector<std::uint32_t> homes;
    void clear() {
      ids.clear();
      vectors.clear();
      homes.clear();
    }
  };
  // What the block's chunks so far add to the index (the writer's), and what
  // the block before added (the pool's join reads it while the writer adds
  // to `added_`).
  Vectors added_, previous_added_;
  bool waiting_ = false;  // previous_added_ has not joined the index yet
  double add_seconds_ = 0.0;
};

}  // namespace winnow::curation::ingest
