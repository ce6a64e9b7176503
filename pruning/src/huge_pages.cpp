#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <string>

// The Linux value; glibc 2.36's <sys/mman.h> does not name it yet.
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

namespace winnow::detail {

namespace {

// The 2 MB-aligned pages inside [data, data + bytes): [first, last).
struct AlignedRange {
  std::uintptr_t first = 0;
  std::uintptr_t last = 0;
  bool empty() const { return last <= first; }
};

AlignedRange aligned_range(const void* data, std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  AlignedRange range{(begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1),
                     (begin + bytes) & ~(kHugePageBytes - 1)};
  if (data == nullptr) range.last = range.first;
  return range;
}

#ifdef MADV_COLLAPSE
// False when the administrator set transparent huge pages to `never` (or the
// kernel has none): MADV_COLLAPSE would ignore that setting, winnow does not.
bool huge_pages_allowed() {
  static const bool allowed = [] {
    std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(enabled, modes);
    return !modes.empty() && modes.find("[never]") == std::string::npos;
  }();
  return allowed;
}
#endif

}  // namespace

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  const AlignedRange range = aligned_range(data, bytes);
  if (range.empty()) return;
  ::madvise(reinterpret_cast<void*>(range.first), range.last - range.first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

bool collapse_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_COLLAPSE
  const AlignedRange range = aligned_range(data, bytes);
  if (range.empty() || !huge_pages_allowed()) return false;
  return ::madvise(reinterpret_cast<void*>(range.first), range.last - range.first, MADV_COLLAPSE) ==
         0;
#else
  (void)data;
  (void)bytes;
  return false;
#endif
}

void back_with_huge_pages(void* data, std::size_t bytes) {
  advise_huge_pages(data, bytes);
  const AlignedRange range = aligned_range(data, bytes);
  if (range.empty()) return;
  for (std::uintptr_t page = range.first; page < range.last; page += kHugePageBytes) {
    *reinterpret_cast<volatile char*>(page) = 0;
  }
  collapse_huge_pages(data, bytes);
}

}  // namespace winnow::detail
