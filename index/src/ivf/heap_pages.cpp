#include "ivf/heap_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace winnow::index::detail {

std::size_t release_pages(void* data, std::size_t bytes) {
#if defined(__linux__)
  static const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return 0;
  const auto page = static_cast<std::uintptr_t>(page_size);
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (start + page - 1) / page * page;
  const std::uintptr_t end = (start + bytes) / page * page;
  if (end <= first) return 0;
  if (madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED) != 0) return 0;
  return end - first;
#else
  (void)data;
  (void)bytes;
  return 0;
#endif
}

}  // namespace winnow::index::detail
