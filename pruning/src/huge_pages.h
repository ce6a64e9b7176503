// Asking the kernel for transparent huge pages on large tables that are
// read and written at random (the scores, the weight codes): with 4 KB pages
// each random access at N = 10M also misses the TLB.
#pragma once

#include <cstddef>

namespace winnow::detail {

// Advises huge pages for the 2 MB-aligned pages inside [data, data + bytes).
// Call it before the memory is first touched: pages already faulted in stay
// small. A hint only: failure costs speed, never correctness.
void advise_huge_pages(void* data, std::size_t bytes);

}  // namespace winnow::detail
