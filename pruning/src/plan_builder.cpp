#include "plan_builder.h"

#include <cmath>
#include <limits>
#include <memory>

namespace winnow::detail {

namespace {

// Scratch memory reused from one plan to the next on each thread (touching
// fresh memory costs a page fault per 4 KB), never zero-filled: every slot is
// written before it is read.
struct ScratchBuffer {
  std::unique_ptr<std::uint64_t[]> data;
  std::size_t capacity = 0;

  std::uint64_t* reserve(std::size_t size) {
    if (capacity < size) {
      data.reset(new std::uint64_t[size]);
      capacity = size;
    }
    return data.get();
  }
};

ScratchBuffer& staging_buffer() {
  thread_local ScratchBuffer buffer;
  return buffer;
}

ScratchBuffer& bucket_buffer() {
  thread_local ScratchBuffer buffer;
  return buffer;
}

}  // namespace

// At most 64 buckets: each write stream touches its own page, and beyond 64
// the scatter outruns the L1 data TLB (64 entries on the machines measured;
// 128 buckets made the scatter 3.5x slower). Buckets of up to about 1M entries
// (8 MB) still shuffle from L2/L3 at N = 10M.
constexpr std::uint64_t kMaxBuckets = 64;
constexpr std::uint64_t kBucketTarget = 16384;

PlanStaging start_plan(EpochPlan& plan) {
  plan.codes_by_id.assign(plan.num_samples, 0);
  return PlanStaging{plan.codes_by_id.data(), staging_buffer().reserve(plan.num_samples + 1)};
}

void finish_plan(EpochPlan& plan, Rng& shared_rng, std::uint64_t kept, bool shuffle) {
  constexpr std::uint64_t kIdMask = kMaxSamples - 1;
  const bool any_code = plan.palette.size() > 1;
  const std::uint64_t* packed = staging_buffer().data.get();

  std::uint64_t count = 1;
  while (shuffle && count < kMaxBuckets && count * kBucketTarget < kept) count *= 2;
  const std::uint64_t mask = count - 1;
  // Bucket sizes are multinomial; mean + 16 sd (plus a floor) never overflows
  // in practice, and a full bucket falls back to the slow path below.
  const std::uint64_t mean_size = kept / count;
  const std::uint64_t want =
      mean_size + 16 * static_cast<std::uint64_t>(std::sqrt(static_cast<double>(mean_size))) + 256;
  // Buckets sit in one buffer, a whole number of pages plus one cache line
  // apart, so their write streams do not all compete for the same cache sets.
  const std::uint64_t stride = (want + 511) / 512 * 512 + 8;
  std::uint64_t* buckets = bucket_buffer().reserve(stride * count);
  std::uint64_t* first[kMaxBuckets];
  std::uint64_t* next[kMaxBuckets];
  std::uint64_t* end[kMaxBuckets];
  for (std::uint64_t b = 0; b < count; ++b) {
    first[b] = buckets + b * stride;
    next[b] = first[b];
    end[b] = first[b] + want;
  }

  // A local copy of the generator: its state stays in registers, which it
  // cannot while entry stores might alias it through a reference.
  Rng rng = shared_rng;
  std::uint64_t bits = 0;
  int bits_left = 0;
  std::vector<std::pair<std::size_t, std::uint64_t>> overflow;  // (bucket, entry), rare
  for (std::uint64_t k = 0; k < kept; ++k) {
    std::size_t b = 0;
    if (mask != 0) {
      if (bits_left == 0) {  // one draw gives the buckets of eight entries
        bits = rng.next();
        bits_left = 8;
      }
      b = static_cast<std::size_t>(bits & mask);
      bits >>= 8;
      --bits_left;
    }
    if (next[b] != end[b]) {
      *next[b]++ = packed[k];
    } else {
      overflow.emplace_back(b, packed[k]);
    }
  }

  // Appended bucket by bucket: resize() would first zero-fill the whole plan.
  plan.ids.clear();
  plan.ids.reserve(kept);
  plan.weight_codes.clear();
  plan.weight_codes.reserve(any_code ? kept : 0);
  std::vector<std::uint64_t> spill;
  for (std::uint64_t b = 0; b < count; ++b) {
    std::uint64_t* p = first[b];
    std::uint64_t size = static_cast<std::uint64_t>(next[b] - p);
    if (!overflow.empty()) {
      // Rare: this bucket ran out of room; shuffle it from a larger copy.
      spill.assign(p, p + size);
      for (const auto& [bucket, entry] : overflow) {
        if (bucket == b) spill.push_back(entry);
      }
      p = spill.data();
      size = spill.size();
    }
    if (shuffle) {
      for (std::uint64_t i = size; i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
    }
    // The bucket is hot in cache: split codes and ids there, then append.
    if (any_code) {
      const std::size_t at = plan.weight_codes.size();
      plan.weight_codes.insert(plan.weight_codes.end(), size, 0);
      for (std::uint64_t i = 0; i < size; ++i)
        plan.weight_codes[at + i] = static_cast<std::uint8_t>(p[i] >> 56);
    }
    for (std::uint64_t i = 0; i < size; ++i) p[i] &= kIdMask;
    plan.ids.insert(plan.ids.end(), p, p + size);
  }
  shared_rng = rng;
  if (!any_code) plan.codes_by_id.clear();
}

void plan_all(std::uint64_t num_samples, Rng& rng, EpochPlan& plan, bool shuffle) {
  plan.num_samples = num_samples;
  plan.palette = {1.0f};
  const PlanStaging staging = start_plan(plan);
  for (std::uint64_t id = 0; id < num_samples; ++id) staging.packed[id] = id;
  finish_plan(plan, rng, num_samples, shuffle);
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
