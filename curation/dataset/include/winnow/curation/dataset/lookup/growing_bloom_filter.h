// GrowingBloomFilter: a set of 64-bit hashes that answers "certainly not
// added" or "maybe added", in about 10 bits per hash.
//
// It grows without seeing its hashes again: once its newest filter holds as
// many hashes as it was sized for, the next ones go to a new filter twice as
// large, and a lookup asks each filter (a scalable Bloom filter; at a million
// hashes from the first filter's 65,536, five of them). Each filter has 10
// bits per hash and 7 probes, a false "maybe" about 1% of the time, so a
// lookup's is about 1% per filter full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::curation {

class GrowingBloomFilter {
 public:
  static constexpr std::size_t kFirstCapacity = std::size_t{1} << 16;

  void add(std::uint64_t hash);
  bool may_contain(std::uint64_t hash) const;
  void clear() { filters_.clear(); }
  std::size_t bytes() const;

 private:
  struct Filter {
    std::vector<std::uint64_t> words;
    std::uint64_t bits = 0;  // words.size() * 64
    std::size_t capacity = 0;
    std::size_t size = 0;
  };
  static void set_bits(Filter& filter, std::uint64_t hash);
  static bool has_bits(const Filter& filter, std::uint64_t hash);

  std::vector<Filter> filters_;  // oldest first; each twice the one before
};

}  // namespace winnow::curation
