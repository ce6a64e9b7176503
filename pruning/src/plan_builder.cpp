#include "plan_builder.h"

#include <limits>

namespace winnow::detail {

void PlanBuilder::finish(Rng& rng, EpochPlan& plan, bool shuffle) {
  std::uint64_t* p = packed_.data();
  const std::uint64_t n = packed_.size();
  if (shuffle) {
    for (std::uint64_t i = n; i > 1; --i) {
      const std::uint64_t j = rng.below(i);
      std::swap(p[i - 1], p[j]);
    }
  }
  constexpr std::uint64_t kIdMask = kMaxSamples - 1;
  bool any_code = false;
  for (std::uint64_t i = 0; i < n && !any_code; ++i) any_code = (p[i] >> 56) != 0;
  if (any_code) {
    plan.weight_codes.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      plan.weight_codes[i] = static_cast<std::uint8_t>(p[i] >> 56);
    }
  } else {
    plan.weight_codes.clear();
  }
  for (std::uint64_t i = 0; i < n; ++i) p[i] &= kIdMask;
  plan.ids = std::move(packed_);
  packed_.clear();
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
