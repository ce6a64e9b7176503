#include "winnow/curation/dataset/lookup/stored_text_sketches.h"

#include <algorithm>
#include <limits>

namespace winnow::curation {

bool StoredTextSketches::put(std::int64_t id, const dedup::TextSketch& sketch) {
  // A set of 2^32 - 1 shingles or more has no room for its "plus one": it
  // is not kept, and its candidates are read as without sketches.
  if (id < 1 || sketch.size() >= std::numeric_limits<std::uint32_t>::max()) return false;
  const auto at = static_cast<std::size_t>(id);
  if (at >= bits_.size()) {
    // Room grown by an eighth (std::vector would double it, leaving up to
    // half of it unused): ids arrive in order, one at a time.
    if (at >= bits_.capacity()) {
      const std::size_t room = std::max(at + 1, bits_.capacity() + bits_.capacity() / 8);
      bits_.reserve(room);
      size_plus_one_.reserve(room);
    }
    bits_.resize(at + 1);
    size_plus_one_.resize(at + 1, 0);
  }
  bits_[at] = sketch.bits();
  size_plus_one_[at] = static_cast<std::uint32_t>(sketch.size() + 1);
  return true;
}

void StoredTextSketches::forget(std::int64_t id) {
  if (id >= 1 && static_cast<std::size_t>(id) < size_plus_one_.size()) {
    size_plus_one_[static_cast<std::size_t>(id)] = 0;
  }
}

std::optional<dedup::TextSketch> StoredTextSketches::find(std::int64_t id) const {
  if (id < 1 || static_cast<std::size_t>(id) >= bits_.size()) return std::nullopt;
  const auto at = static_cast<std::size_t>(id);
  if (size_plus_one_[at] == 0) return std::nullopt;
  return dedup::TextSketch(bits_[at], size_plus_one_[at] - 1);
}

void StoredTextSketches::clear() {
  // Swapped out rather than cleared: clear() keeps the memory.
  std::vector<std::array<std::uint64_t, 2>>().swap(bits_);
  std::vector<std::uint32_t>().swap(size_plus_one_);
}

std::size_t StoredTextSketches::bytes() const {
  return bits_.capacity() * sizeof(bits_[0]) + size_plus_one_.capacity() * sizeof(std::uint32_t);
}

}  // namespace winnow::curation
