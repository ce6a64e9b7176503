#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/utsname.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "huge_pages.h"  // internal: the plan's and the score table's huge pages

namespace {

using winnow::detail::kHugePageBytes;

// Whether this kernel can collapse this process's memory onto huge pages:
// THP not `never`, not turned off for the process (PR_SET_THP_DISABLE), and
// Linux 6.1 or later (MADV_COLLAPSE).
bool kernel_collapses() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(enabled)), std::istreambuf_iterator<char>());
  if (modes.empty() || modes.find("[never]") != std::string::npos) return false;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("THP_enabled:", 0) == 0 && line.find('0') != std::string::npos) return false;
  }
  utsname name{};
  if (::uname(&name) != 0) return false;
  int major = 0;
  int minor = 0;
  if (std::sscanf(name.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 1);
}

// AnonHugePages of the mapping that holds `address`, in bytes (/proc/self/smaps).
std::size_t huge_bytes_of_mapping(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long begin = 0;
    unsigned long end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {  // a mapping's first line
      inside = target >= begin && target < end;
      continue;
    }
    std::size_t kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %zu kB", &kb) == 1) return kb << 10;
  }
  return 0;
}

// An anonymous mapping with a 2 MB-aligned span of `pages` huge pages inside.
struct Mapping {
  explicit Mapping(std::size_t pages) : bytes((pages + 1) * kHugePageBytes) {
    memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    const auto begin = reinterpret_cast<std::uintptr_t>(memory);
    aligned = reinterpret_cast<char*>((begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
    aligned_bytes = pages * kHugePageBytes;
  }
  ~Mapping() { ::munmap(memory, bytes); }
  void* memory = nullptr;
  std::size_t bytes = 0;
  char* aligned = nullptr;
  std::size_t aligned_bytes = 0;
};

}  // namespace

TEST_CASE("memory faulted in on 4 KB pages is collapsed onto huge pages", "[huge-pages]") {
  Mapping mapping(8);
  // Not advised, so under THP `madvise` these faults take 4 KB pages.
  std::memset(mapping.aligned, 1, mapping.aligned_bytes);
  const bool collapsed =
      winnow::detail::collapse_huge_pages(mapping.aligned, mapping.aligned_bytes);
  if (!kernel_collapses()) {
    CHECK_FALSE(collapsed);
    return;
  }
  CHECK(collapsed);
  CHECK(huge_bytes_of_mapping(mapping.aligned) >= mapping.aligned_bytes);
  // The contents survive the move.
  CHECK(mapping.aligned[0] == 1);
  CHECK(mapping.aligned[mapping.aligned_bytes - 1] == 1);
}

TEST_CASE("fresh scratch memory is backed with huge pages before its first use", "[huge-pages]") {
  Mapping mapping(8);
  // Advised, then faulted in one byte per 2 MB page: each fault takes a huge
  // page where one is free, and what took 4 KB pages is collapsed.
  winnow::detail::back_with_huge_pages(mapping.memory, mapping.bytes);
  if (!kernel_collapses()) return;
  CHECK(huge_bytes_of_mapping(mapping.aligned) >= mapping.aligned_bytes);
}

TEST_CASE("ranges without a whole 2 MB page are left alone", "[huge-pages]") {
  Mapping mapping(1);
  char* inside = mapping.aligned + 4096;
  std::memset(inside, 1, kHugePageBytes - 8192);
  CHECK_FALSE(winnow::detail::collapse_huge_pages(inside, kHugePageBytes - 8192));
  CHECK_FALSE(winnow::detail::collapse_huge_pages(nullptr, 4 * kHugePageBytes));
  winnow::detail::back_with_huge_pages(inside, kHugePageBytes - 8192);  // must not touch outside
  CHECK(inside[0] == 1);
}
