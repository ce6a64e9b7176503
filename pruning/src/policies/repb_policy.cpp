#include "repb_policy.h"

#include <algorithm>
#include <cmath>

#include "../plan_builder.h"
#include "infobatch_policy.h"
#include "winnow/error.h"

namespace winnow {
namespace {

// Counts are kept as floats (the policy state's type): exact below 2^24, so
// the two run totals are saved split at 2^24.
constexpr double kSplit = 16777216.0;

// Weight codes: code 0 is weight 1 (kept every time); code c > 0 stands for
// selection counts in one range of `width`. Exact (width 1) while E <= 255.
struct SelectionCodes {
  std::uint64_t plans;  // E
  std::uint64_t width;  // counts per code

  explicit SelectionCodes(std::uint64_t e) : plans(e), width((e + 253) / 254) {}
  std::uint8_t code(std::uint64_t count) const {
    if (count >= plans) return 0;
    return static_cast<std::uint8_t>(1 + (count - 1) / width);
  }
  std::vector<float> palette() const {
    std::vector<float> weights{1.0f};
    for (std::uint64_t c = 1; 1 + (c - 1) * width < plans; ++c) {
      const std::uint64_t low = 1 + (c - 1) * width;
      const std::uint64_t high = std::min(plans - 1, low + width - 1);
      const double mean_count = (static_cast<double>(low) + static_cast<double>(high)) / 2.0;
      weights.push_back(static_cast<float>(static_cast<double>(plans) / mean_count));
    }
    return weights;
  }
};

}  // namespace

RepbPolicy::RepbPolicy(const PolicySpec& spec, std::uint64_t num_samples) {
  ParamReader reader(spec);
  r_ = read_prune_ratio(reader, spec, r_);
  const double window = reader.number("window", static_cast<double>(window_));
  reader.finish();
  WINNOW_THROW_IF_NOT(window >= 1.0 && window <= 1e15 && window == std::floor(window),
                      "policy '{}': window (observations per local window) must be a whole "
                      "number >= 1, got {}",
                      spec.to_string(), window);
  window_ = static_cast<std::uint64_t>(window);
  window_of_.assign(num_samples, 0.0f);
  selected_.assign(num_samples, 0.0f);
}

PolicySpec RepbPolicy::spec() const {
  return PolicySpec{
      "repb", {{"r", format_number(r_)}, {"window", format_number(static_cast<double>(window_))}}};
}

void RepbPolicy::observe(const ScoreTable& /*before*/, const std::uint64_t* ids,
                         const float* /*losses*/, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    // Window indices beyond 2^24 round to a neighbour: adjacent windows merge.
    window_of_[ids[i]] = static_cast<float>(1 + (observed_ + i) / window_);
  }
  observed_ += count;
}

std::vector<float> RepbPolicy::state() const {
  std::vector<float> out;
  out.reserve(window_of_.size() + selected_.size() + 4);
  out.insert(out.end(), window_of_.begin(), window_of_.end());
  out.insert(out.end(), selected_.begin(), selected_.end());
  for (std::uint64_t total : {plans_made_, observed_}) {
    out.push_back(static_cast<float>(std::floor(static_cast<double>(total) / kSplit)));
    out.push_back(static_cast<float>(std::fmod(static_cast<double>(total), kSplit)));
  }
  return out;
}

void RepbPolicy::set_state(const std::vector<float>& state) {
  const std::size_t n = window_of_.size();
  WINNOW_THROW_IF_NOT(state.size() == 2 * n + 4,
                      "policy '{}': state holds {} values, expected {} (2 per sample + 4)",
                      spec().to_string(), state.size(), 2 * n + 4);
  for (float v : state) {
    WINNOW_THROW_IF_NOT(v >= 0.0f && v == std::floor(v),
                        "policy '{}': state values must be whole numbers >= 0, got {}",
                        spec().to_string(), v);
  }
  window_of_.assign(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(n));
  selected_.assign(state.begin() + static_cast<std::ptrdiff_t>(n),
                   state.begin() + static_cast<std::ptrdiff_t>(2 * n));
  auto total = [&](std::size_t at) {
    return static_cast<std::uint64_t>(static_cast<double>(state[at]) * kSplit + state[at + 1]);
  };
  plans_made_ = total(2 * n);
  observed_ = total(2 * n + 2);
}

void RepbPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const float* s = scores.data();

  // Mean score per window (windows are numbered 0 = never observed, 1, 2, ...).
  const auto [low_it, high_it] = std::minmax_element(window_of_.begin(), window_of_.end());
  const auto first_window = static_cast<std::uint64_t>(*low_it);
  const std::uint64_t windows = static_cast<std::uint64_t>(*high_it) - first_window + 1;
  std::vector<double> sum(windows, 0.0);
  std::vector<std::uint64_t> count(windows, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto w = static_cast<std::uint64_t>(window_of_[i]) - first_window;
    sum[w] += s[i];
    ++count[w];
  }
  std::vector<float> threshold(windows);
  for (std::uint64_t w = 0; w < windows; ++w) {
    threshold[w] =
        count[w] == 0 ? 0.0f : static_cast<float>(sum[w] / static_cast<double>(count[w]));
  }

  ++plans_made_;
  const SelectionCodes codes(plans_made_);
  const double keep = 1.0 - r_;
  const auto keep_below = static_cast<std::uint64_t>(std::ldexp(keep, 64));
  const bool keep_all = r_ == 0.0;
  std::uint64_t candidates = 0;
  const std::uint64_t kept = detail::stage_plan(plan, 255, [&](auto staging) {
    std::uint64_t taken = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto w = static_cast<std::uint64_t>(window_of_[i]) - first_window;
      const bool candidate = s[i] < threshold[w];
      candidates += candidate ? 1 : 0;
      if (candidate && !keep_all && rng.next() >= keep_below) continue;
      selected_[i] += 1.0f;
      const std::uint8_t code = codes.code(static_cast<std::uint64_t>(selected_[i]));
      staging.codes[i] = code;
      staging.packed[taken++] = staging.pack(i, code);
    }
    return taken;
  });
  plan.palette = codes.palette();
  detail::finish_plan(plan, rng, kept);
  plan.candidates = candidates;
}

}  // namespace winnow
