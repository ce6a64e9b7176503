// TextSketch: 20 bytes that stand for a text's shingle set when a near-duplicate
// candidate only needs ruling out: the set's size and a 128-bit filter with
// one bit set per shingle hash.
//
// A shingle the sketched set holds has its bit set, so the shingles of another
// set whose bits are set bound from above how many the two sets share. The
// text verifier turns that bound into a bound on its similarity
// (TextNearDuplicateVerifier::similarity_at_most); a candidate whose bound is
// below the threshold cannot be a near duplicate, and its text need not be
// read. The bound is exact arithmetic, never an estimate: ruling out with it
// changes no decision. It is tight for short texts (a few dozen shingles set
// few of the 128 bits) and useless, though still true, for long ones.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::curation::dedup {

class TextSketch {
 public:
  TextSketch() = default;
  // The sketch of a set of shingle hashes (TextNearDuplicateVerifier::shingles).
  static TextSketch of(const std::vector<std::uint64_t>& shingles);

  // How many shingles the sketched set holds.
  std::size_t size() const { return size_; }
  // At most how many of `shingles` (distinct hashes) the sketched set holds:
  // those whose bit is set here.
  std::size_t max_common(const std::vector<std::uint64_t>& shingles) const;

  const std::array<std::uint64_t, 2>& bits() const { return bits_; }
  // A sketch from stored parts (StoredTextSketches keeps them apart).
  TextSketch(const std::array<std::uint64_t, 2>& bits, std::uint32_t size)
      : bits_(bits), size_(size) {}

 private:
  // A shingle's bit: the hash's top seven bits (hash64 mixes all of them).
  static unsigned bit_of(std::uint64_t shingle) { return static_cast<unsigned>(shingle >> 57); }
  bool has_bit(unsigned bit) const { return ((bits_[bit >> 6] >> (bit & 63)) & 1u) != 0; }

  std::array<std::uint64_t, 2> bits_{};
  std::uint32_t size_ = 0;
};

}  // namespace winnow::curation::dedup
