#include "winnow/curation/dataset/lookup/growing_bloom_filter.h"

#include <algorithm>

namespace winnow::curation {
namespace {

constexpr std::uint64_t kBitsPerHash = 10;
constexpr int kProbes = 7;  // about ln 2 * 10: the fewest false "maybe"s for 10 bits

// A filter of at most 2^32 bits (400 million hashes), so that a probe maps
// onto its bits by one 64-bit multiply; later filters stay that size.
constexpr std::size_t kMaxCapacity = (std::uint64_t{1} << 32) / kBitsPerHash;

// The probes are h1 + i * h2 (Kirsch and Mitzenmacher: two hashes suffice),
// each mapped onto [0, bits) by a multiply instead of a modulo.
std::uint64_t probe(std::uint64_t hash, int i, std::uint64_t bits) {
  const std::uint64_t h2 = (hash >> 32 | hash << 32) | 1;
  const std::uint64_t mixed = hash + static_cast<std::uint64_t>(i) * h2;
  return ((mixed >> 32) * bits) >> 32;
}

}  // namespace

void GrowingBloomFilter::set_bits(Filter& filter, std::uint64_t hash) {
  for (int i = 0; i < kProbes; ++i) {
    const std::uint64_t bit = probe(hash, i, filter.bits);
    filter.words[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  ++filter.size;
}

bool GrowingBloomFilter::has_bits(const Filter& filter, std::uint64_t hash) {
  for (int i = 0; i < kProbes; ++i) {
    const std::uint64_t bit = probe(hash, i, filter.bits);
    if ((filter.words[bit / 64] >> (bit % 64) & 1) == 0) return false;
  }
  return true;
}

void GrowingBloomFilter::add(std::uint64_t hash) {
  if (filters_.empty() || filters_.back().size == filters_.back().capacity) {
    Filter next;
    next.capacity =
        filters_.empty() ? kFirstCapacity : std::min(2 * filters_.back().capacity, kMaxCapacity);
    next.words.assign((next.capacity * kBitsPerHash + 63) / 64, 0);
    next.bits = next.words.size() * 64;
    filters_.push_back(std::move(next));
  }
  set_bits(filters_.back(), hash);
}

bool GrowingBloomFilter::may_contain(std::uint64_t hash) const {
  for (const Filter& filter : filters_) {
    if (has_bits(filter, hash)) return true;
  }
  return false;
}

std::size_t GrowingBloomFilter::bytes() const {
  std::size_t total = 0;
  for (const Filter& filter : filters_) total += filter.words.size() * sizeof(std::uint64_t);
  return total;
}

}  // namespace winnow::curation
