#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "ivf/heap_pages.h"

using winnow::index::detail::release_pages;

TEST_CASE("release_pages zeroes the whole pages inside a block and nothing else", "[heap]") {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  REQUIRE(page > 0);
  std::vector<std::uint8_t> block(6 * page + 100, 0xAB);
  // From 10 bytes in to 10 bytes before the end: the whole pages between.
  std::uint8_t* begin = block.data() + 10;
  const std::size_t bytes = block.size() - 20;
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (start + page - 1) / page * page;
  const std::uintptr_t end = (start + bytes) / page * page;
  REQUIRE(release_pages(begin, bytes) == end - first);
  CHECK(end - first >= 5 * page);
  std::size_t zeros = 0, kept = 0;
  for (std::size_t i = 0; i < block.size(); ++i) {
    const auto at = reinterpret_cast<std::uintptr_t>(block.data() + i);
    if (at >= first && at < end) {
      zeros += block[i] == 0;
    } else {
      kept += block[i] == 0xAB;
    }
  }
  CHECK(zeros == end - first);
  CHECK(kept == block.size() - (end - first));
  // The block is still the caller's: written again, it holds what was written.
  block.assign(block.size(), 0x5C);
  CHECK(block[block.size() / 2] == 0x5C);
}

TEST_CASE("release_pages leaves a block without a whole page alone", "[heap]") {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<std::uint8_t> small(page / 2, 0xAB);
  CHECK(release_pages(small.data(), small.size()) == 0);
  CHECK(small.front() == 0xAB);
  CHECK(small.back() == 0xAB);
}
