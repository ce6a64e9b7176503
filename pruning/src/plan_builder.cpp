#include "plan_builder.h"

#include <limits>

namespace winnow::detail {

namespace {

// Bucket buffers are reused from one plan to the next: touching fresh memory
// costs a page fault per 4 KB, which at N = 10M is half of a plan's time.
std::vector<std::vector<std::uint64_t>>& bucket_pool() {
  thread_local std::vector<std::vector<std::uint64_t>> pool;
  return pool;
}

}  // namespace

PlanBuilder::PlanBuilder(std::uint64_t expected_size, std::uint64_t num_samples, Rng& rng,
                         bool shuffle)
    : rng_(rng), shuffle_(shuffle), num_samples_(num_samples) {
  // About 16k entries (128 KB) per bucket keeps each bucket's shuffle in L2.
  std::uint64_t count = 1;
  while (shuffle_ && count < 256 && count * 16384 < expected_size) count *= 2;
  bucket_mask_ = count - 1;
  buckets_.swap(bucket_pool());
  buckets_.resize(std::max<std::size_t>(buckets_.size(), count));
  const std::uint64_t per_bucket = expected_size / count;
  for (std::uint64_t b = 0; b < count; ++b) {
    // resize() on reused storage only touches memory the last plan used.
    buckets_[b].resize(per_bucket + per_bucket / 16 + 64);
    next_[b] = buckets_[b].data();
    end_[b] = buckets_[b].data() + buckets_[b].size();
  }
}

void PlanBuilder::grow(std::size_t bucket) {
  std::vector<std::uint64_t>& storage = buckets_[bucket];
  const auto used = static_cast<std::size_t>(next_[bucket] - storage.data());
  storage.resize(storage.size() * 2);
  next_[bucket] = storage.data() + used;
  end_[bucket] = storage.data() + storage.size();
}

PlanBuilder::~PlanBuilder() {
  for (auto& bucket : buckets_) bucket.clear();
  bucket_pool().swap(buckets_);
}

void PlanBuilder::note_code(std::uint64_t id, std::uint8_t code) {
  if (!codes_in_order_) return;
  if (codes_by_id_.empty()) {
    codes_by_id_.assign(num_samples_, 0);
  } else if (id <= last_coded_id_) {
    codes_in_order_ = false;
    codes_by_id_.clear();
    return;
  }
  codes_by_id_[id] = code;
  last_coded_id_ = id;
}

void PlanBuilder::finish(EpochPlan& plan) {
  constexpr std::uint64_t kIdMask = kMaxSamples - 1;
  std::uint64_t total = 0;
  for (std::uint64_t b = 0; b <= bucket_mask_; ++b) {
    buckets_[b].resize(static_cast<std::size_t>(next_[b] - buckets_[b].data()));
    total += buckets_[b].size();
  }
  plan.ids.clear();
  plan.ids.reserve(total);
  plan.weight_codes.clear();
  plan.weight_codes.reserve(any_code_ ? total : 0);
  for (std::uint64_t b = 0; b <= bucket_mask_; ++b) {
    std::vector<std::uint64_t>& bucket = buckets_[b];
    std::uint64_t* p = bucket.data();
    const std::uint64_t n = bucket.size();
    if (shuffle_) {
      for (std::uint64_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng_.below(i)]);
    }
    // The bucket is hot in cache: split codes from ids there, then append.
    if (any_code_) {
      for (std::uint64_t i = 0; i < n; ++i) {
        plan.weight_codes.push_back(static_cast<std::uint8_t>(p[i] >> 56));
      }
    }
    for (std::uint64_t i = 0; i < n; ++i) p[i] &= kIdMask;
    plan.ids.insert(plan.ids.end(), p, p + n);
  }
  if (any_code_ && codes_in_order_) {
    plan.codes_by_id.swap(codes_by_id_);
  } else {
    plan.codes_by_id.clear();
  }
}

void plan_all(std::uint64_t num_samples, Rng& rng, EpochPlan& plan, bool shuffle) {
  PlanBuilder builder(num_samples, num_samples, rng, shuffle);
  for (std::uint64_t id = 0; id < num_samples; ++id) builder.add(id, 0);
  builder.finish(plan);
  plan.palette = {1.0f};
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
