// The pages of a heap block given back to the system while the block stays
// allocated: for blocks about to be freed into a heap that may not reuse them.
//
// glibc gives each thread a heap of its own (an arena) and returns a freed
// block to the heap it came from, where only that heap's threads reuse it. An
// IVF cell grown on another thread than the one that allocated it leaves its
// old block behind in the first thread's heap, resident. A store opened on the
// main thread, whose cells then grow on the pool's thread, left nearly its
// whole index behind that way, so its peak memory on two threads rose far
// above one thread's (docs/benchmarks.md, "Memory").
#pragma once

#include <cstddef>

namespace winnow::index::detail {

// Gives the whole pages inside [data, data + bytes) back to the system
// (Linux: madvise MADV_DONTNEED), so that they no longer count as resident; the
// block stays allocated, and reads as zeros there until written. Returns the
// bytes released: 0 for a block without a whole page, or where the system
// refuses (nothing is lost then but the memory) or cannot (not Linux).
std::size_t release_pages(void* data, std::size_t bytes);

}  // namespace winnow::index::detail
