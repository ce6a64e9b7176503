// Asking the kernel for transparent huge pages on large tables that are
// read and written at random (the scores, the weight codes) and on the plan's
// scratch buffers: with 4 KB pages each random access at N = 10M also misses
// the TLB, and the plan's bucket scatter keeps more write streams open than
// the first-level TLB holds.
#pragma once

#include <cstddef>

namespace winnow::detail {

// The size of a transparent huge page on x86-64 and most arm64 kernels.
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Advises huge pages for the 2 MB-aligned pages inside [data, data + bytes).
// Call it before the memory is first touched: pages already faulted in stay
// small. A hint only: failure costs speed, never correctness.
void advise_huge_pages(void* data, std::size_t bytes);

// Moves the 2 MB-aligned pages inside [data, data + bytes), already faulted
// in, onto huge pages where the kernel gave them 4 KB pages at fault time:
// memory advised after it was touched, or no free 2 MB page and a THP
// `defrag` setting that lets a fault not compact for one. Uses MADV_COLLAPSE
// (Linux 6.1+), which compacts memory synchronously whatever `defrag` says;
// pages already huge cost next to nothing. A no-op where THP is `never`
// (MADV_COLLAPSE would ignore it), off for the process, or the kernel older.
// Returns whether the kernel reported the range collapsed.
bool collapse_huge_pages(void* data, std::size_t bytes);

// Advises huge pages for fresh memory, faults in each of its 2 MB pages by
// writing a zero byte at its start, then collapses what the faults left on
// 4 KB pages. For buffers whose contents are written before they are read.
void back_with_huge_pages(void* data, std::size_t bytes);

}  // namespace winnow::detail
