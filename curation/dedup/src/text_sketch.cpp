#include "winnow/curation/dedup/text_sketch.h"

#include <algorithm>
#include <limits>

namespace winnow::curation::dedup {

TextSketch TextSketch::of(const std::vector<std::uint64_t>& shingles) {
  TextSketch sketch;
  for (const std::uint64_t shingle : shingles) {
    const unsigned bit = bit_of(shingle);
    sketch.bits_[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
  // A set past 2^32 shingles (a 4 GB text) is counted as 2^32 - 1: its
  // bound only grows looser, never wrong (see similarity_at_most).
  sketch.size_ = static_cast<std::uint32_t>(
      std::min<std::size_t>(shingles.size(), std::numeric_limits<std::uint32_t>::max()));
  return sketch;
}

std::size_t TextSketch::max_common(const std::vector<std::uint64_t>& shingles) const {
  std::size_t set = 0;
  for (const std::uint64_t shingle : shingles) set += has_bit(bit_of(shingle)) ? 1 : 0;
  return set;
}

}  // namespace winnow::curation::dedup
