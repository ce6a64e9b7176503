#include "plan_builder.h"

#include "huge_pages.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

namespace winnow::detail {

namespace {

// Scratch memory reused from one plan to the next on each thread (touching
// fresh memory costs a page fault per 4 KB), never zero-filled: every slot is
// written before it is read. It is backed with huge pages when allocated (see
// back_with_huge_pages): the shuffle's random accesses and the bucket
// scatter's many write streams then need a handful of TLB entries instead of
// one per 4 KB.
class ScratchBuffer {
 public:
  void* reserve(std::size_t bytes) {
    if (capacity_ < bytes) {
      const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
      void* memory = std::aligned_alloc(kHugePageBytes, rounded);
      if (memory == nullptr) throw std::bad_alloc();
      back_with_huge_pages(memory, rounded);
      data_.reset(memory);
      capacity_ = rounded;
    }
    return data_.get();
  }
  void* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  std::size_t capacity_ = 0;
};

struct StagingBuffer {
  ScratchBuffer memory;
  StagingLayout layout{false, 56};
};

StagingBuffer& staging_buffer() {
  thread_local StagingBuffer buffer;
  return buffer;
}

ScratchBuffer& bucket_buffer() {
  thread_local ScratchBuffer buffer;
  return buffer;
}

// At most 256 buckets, so one byte of a draw picks an entry's bucket. The
// buffers sit on huge pages, so the 256 write streams of the scatter need few
// TLB entries (on 4 KB pages even 128 buckets slowed the scatter badly);
// more buckets would slow the scatter itself (its write streams outgrow the
// L1 cache). Buckets of about 26k entries at N = 10M and
// 260k at N = 100M shuffle from L2.
constexpr std::uint64_t kMaxBuckets = 256;
constexpr std::uint64_t kBucketTarget = 16384;

// Fisher-Yates shuffle of a bucket. Buckets hold fewer than 2^32 entries (a
// larger one takes 64-bit draws), so each position takes a 32-bit bounded draw
// (Lemire's multiply-shift with rejection, as Rng::below): two draws per
// generator step. Buckets of up to a few hundred thousand entries sit in L2,
// where the plain loop is fastest: drawing a few positions ahead and
// prefetching their entries was tried and made no plan faster
// (docs/benchmarks.md, "The sampler").
template <typename Entry>
void fisher_yates(Entry* p, std::uint64_t size, Rng& rng) {
  if (size < 2) return;
  if (size > UINT32_MAX) {  // a single bucket past 2^32 entries: 64-bit draws
    for (std::uint64_t i = size; i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
    return;
  }
  std::uint64_t bits = 0;
  bool half_left = false;
  auto draw32 = [&]() -> std::uint32_t {
    if (half_left) {
      half_left = false;
      return static_cast<std::uint32_t>(bits >> 32);
    }
    bits = rng.next();
    half_left = true;
    return static_cast<std::uint32_t>(bits);
  };
  auto below = [&](std::uint32_t bound) -> std::uint32_t {
    std::uint64_t m = static_cast<std::uint64_t>(draw32()) * bound;
    auto low = static_cast<std::uint32_t>(m);
    if (low < bound) {
      const std::uint32_t threshold = (0u - bound) % bound;
      while (low < threshold) {
        m = static_cast<std::uint64_t>(draw32()) * bound;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  };
  for (std::uint64_t i = size; i > 1; --i) {
    std::swap(p[i - 1], p[below(static_cast<std::uint32_t>(i))]);
  }
}

// A bucket of the plan shuffle: its entries, its place in the plan and the
// seed of its own shuffle.
template <typename Entry>
struct PlanBucket {
  Entry* entries;
  std::uint64_t size;
  std::uint64_t offset;
  std::uint64_t seed;
};

// Scatters the `kept` staged entries into buckets at random (one bucket
// when not `shuffle`), in the order they are staged. A full bucket spills
// into its vector of `spill`, which must outlive the buckets.
template <typename Entry>
std::vector<PlanBucket<Entry>> scatter_staged(Rng& shared_rng, std::uint64_t kept, bool shuffle,
                                              std::vector<std::vector<Entry>>& spill) {
  const auto* packed = static_cast<const Entry*>(staging_buffer().memory.data());
  std::uint64_t count = 1;
  while (shuffle && count < kMaxBuckets && count * kBucketTarget < kept) count *= 2;
  const std::uint64_t mask = count - 1;
  // Bucket sizes are multinomial; mean + 16 sd (plus a floor) never overflows
  // in practice, and a full bucket spills into a vector of its own.
  const std::uint64_t mean_size = kept / count;
  const std::uint64_t want =
      mean_size + 16 * static_cast<std::uint64_t>(std::sqrt(static_cast<double>(mean_size))) + 256;
  // Buckets sit in one buffer, a whole number of pages plus one cache line
  // apart, so their write streams do not all compete for the same cache sets.
  constexpr std::uint64_t kPage = 4096 / sizeof(Entry);
  constexpr std::uint64_t kLine = 64 / sizeof(Entry);
  const std::uint64_t stride = (want + kPage - 1) / kPage * kPage + kLine;
  auto* buckets = static_cast<Entry*>(bucket_buffer().reserve(stride * count * sizeof(Entry)));
  Entry* next[kMaxBuckets];
  Entry* end[kMaxBuckets];
  for (std::uint64_t b = 0; b < count; ++b) {
    next[b] = buckets + b * stride;
    end[b] = next[b] + want;
  }

  // A local copy of the generator: its state stays in registers, which it
  // cannot while entry stores might alias it through a reference.
  Rng rng = shared_rng;
  spill.assign(count, {});
  auto place = [&](std::size_t b, Entry entry) {
    if (next[b] != end[b]) {
      *next[b]++ = entry;
    } else {
      spill[b].push_back(entry);
    }
  };
  if (mask == 0) {
    for (std::uint64_t k = 0; k < kept; ++k) place(0, packed[k]);
  } else {
    // One draw gives the buckets of eight entries, a byte each.
    for (std::uint64_t k = 0; k < kept; k += 8) {
      std::uint64_t bits = rng.next();
      const std::uint64_t stop = std::min(k + 8, kept);
      for (std::uint64_t j = k; j < stop; ++j, bits >>= 8) {
        place(static_cast<std::size_t>(bits & mask), packed[j]);
      }
    }
  }

  std::vector<PlanBucket<Entry>> parts(count);
  std::uint64_t offset = 0;
  for (std::uint64_t b = 0; b < count; ++b) {
    Entry* first = buckets + b * stride;
    std::uint64_t size = static_cast<std::uint64_t>(next[b] - first);
    if (!spill[b].empty()) {
      spill[b].insert(spill[b].begin(), first, next[b]);
      first = spill[b].data();
      size = spill[b].size();
    }
    parts[b] = PlanBucket<Entry>{first, size, offset, rng.next()};
    offset += size;
  }
  shared_rng = rng;
  return parts;
}

// Shuffles each bucket (when `shuffle`) and splits its entries into the
// plan's ids and weight codes (`any_code`) at the bucket's place; past
// parallel_plan_entries() entries a second thread takes buckets too.
template <typename Entry>
void finish_buckets(EpochPlan& plan, const std::vector<PlanBucket<Entry>>& parts,
                    std::uint64_t kept, bool shuffle, bool any_code, unsigned shift) {
  const Entry id_mask = static_cast<Entry>((Entry{1} << shift) - 1);
  std::uint64_t* ids = plan.ids.data();
  std::uint8_t* codes = plan.weight_codes.data();
  auto finish_bucket = [&](const PlanBucket<Entry>& bucket) {
    Rng bucket_rng(bucket.seed);
    if (shuffle) fisher_yates(bucket.entries, bucket.size, bucket_rng);
    // The bucket is hot in cache: split codes and ids there. Locals, not
    // captures: a store through `out` may alias anything reached by
    // reference, which would then be reloaded for every entry (and the loops
    // not vectorised).
    const Entry* p = bucket.entries;
    const std::uint64_t size = bucket.size;
    const Entry id_bits = id_mask;
    const unsigned code_shift = shift;
    std::uint64_t* out = ids + bucket.offset;
    for (std::uint64_t i = 0; i < size; ++i) out[i] = p[i] & id_bits;
    if (any_code) {
      std::uint8_t* out_codes = codes + bucket.offset;
      for (std::uint64_t i = 0; i < size; ++i) {
        out_codes[i] = static_cast<std::uint8_t>(p[i] >> code_shift);
      }
    }
  };
  const std::uint64_t count = parts.size();
  std::atomic<std::uint64_t> next_bucket{0};
  auto work = [&]() {
    for (std::uint64_t b; (b = next_bucket.fetch_add(1)) < count;) finish_bucket(parts[b]);
  };
  std::thread helper;
  if (kept >= parallel_plan_entries() && count > 1 && std::thread::hardware_concurrency() > 1) {
    try {
      helper = std::thread(work);
    } catch (const std::system_error&) {
      // No second thread to be had: this one finishes every bucket.
    }
  }
  work();
  if (helper.joinable()) helper.join();
}

template <typename Entry>
void shuffle_staged(EpochPlan& plan, Rng& shared_rng, std::uint64_t kept, bool shuffle,
                    unsigned shift) {
  const bool any_code = plan.palette.size() > 1;
  std::vector<std::vector<Entry>> spill;  // entries past a full bucket, rare
  const std::vector<PlanBucket<Entry>> parts =
      scatter_staged<Entry>(shared_rng, kept, shuffle, spill);
  // Sized, not appended: the plan keeps the previous epoch's length, so only
  // growth is zero-filled (a resize from empty would zero-fill all of it in
  // one cold pass).
  plan.ids.resize(kept);
  if (any_code) {
    plan.weight_codes.resize(kept);
  } else {
    plan.weight_codes.clear();
  }
  finish_buckets(plan, parts, kept, shuffle, any_code, shift);
  if (!any_code) plan.codes_by_id.clear();
}

}  // namespace

std::uint64_t& parallel_plan_entries() {
  static std::uint64_t entries = std::uint64_t{1} << 24;
  return entries;
}

StagingLayout staging_layout(std::uint64_t num_samples, std::uint8_t max_code) {
  unsigned code_bits = 1;
  while ((max_code >> code_bits) != 0) ++code_bits;
  const unsigned narrow_shift = 32 - code_bits;
  if (num_samples <= (std::uint64_t{1} << narrow_shift)) return {true, narrow_shift};
  return {false, 56};
}

void* start_plan(EpochPlan& plan, StagingLayout layout) {
  // Read at random by every weight lookup: huge pages spare the TLB.
  const bool grows = plan.codes_by_id.capacity() < plan.num_samples;
  if (grows) {
    plan.codes_by_id.clear();
    plan.codes_by_id.shrink_to_fit();
    plan.codes_by_id.reserve(plan.num_samples);
    advise_huge_pages(plan.codes_by_id.data(), plan.num_samples);
  }
  plan.codes_by_id.assign(plan.num_samples, 0);
  if (grows) collapse_huge_pages(plan.codes_by_id.data(), plan.num_samples);
  StagingBuffer& staging = staging_buffer();
  staging.layout = layout;
  const std::size_t entry_bytes = layout.narrow ? sizeof(std::uint32_t) : sizeof(std::uint64_t);
  return staging.memory.reserve((plan.num_samples + 1) * entry_bytes);
}

void finish_plan(EpochPlan& plan, Rng& rng, std::uint64_t kept, bool shuffle) {
  const StagingLayout layout = staging_buffer().layout;
  if (layout.narrow) {
    shuffle_staged<std::uint32_t>(plan, rng, kept, shuffle, layout.shift);
  } else {
    shuffle_staged<std::uint64_t>(plan, rng, kept, shuffle, layout.shift);
  }
}

void plan_all(std::uint64_t num_samples, Rng& rng, EpochPlan& plan, bool shuffle) {
  plan.num_samples = num_samples;
  plan.palette = {1.0f};
  const std::uint64_t kept = stage_plan(plan, 0, [&](auto staging) {
    for (std::uint64_t id = 0; id < num_samples; ++id) staging.packed[id] = staging.pack(id, 0);
    return num_samples;
  });
  finish_plan(plan, rng, kept, shuffle);
  plan.candidates = 0;
}

TopK::TopK(const float* values, std::uint64_t n, std::uint64_t k) {
  if (k == 0) {
    threshold_ = std::numeric_limits<float>::infinity();
    return;
  }
  if (k >= n) {
    threshold_ = -std::numeric_limits<float>::infinity();
    ties_ = n;
    return;
  }
  std::vector<float> copy(values, values + n);
  auto kth = copy.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(copy.begin(), kth, copy.end(), std::greater<float>());
  threshold_ = *kth;
  std::uint64_t above = 0;
  for (std::uint64_t i = 0; i < n; ++i) above += values[i] > threshold_ ? 1 : 0;
  ties_ = k - above;
}

}  // namespace winnow::detail
