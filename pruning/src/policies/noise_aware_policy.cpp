#include "noise_aware_policy.h"

#include <cmath>

#include "winnow/error.h"

namespace winnow {

PolicySpec NoiseAwarePolicy::inner_spec(PolicySpec spec) {
  for (const char* key : {"noisy", "noisy_factor", "noisy_weight"}) spec.params.erase(key);
  return spec;
}

NoiseAwarePolicy::NoiseAwarePolicy(std::unique_ptr<Policy> inner, const PolicySpec& spec,
                                   std::uint64_t num_samples)
    : inner_(std::move(inner)) {
  PolicySpec own{spec.name, {}};
  for (const char* key : {"noisy", "noisy_factor", "noisy_weight"}) {
    const auto it = spec.params.find(key);
    if (it != spec.params.end()) own.params[key] = it->second;
  }
  ParamReader reader(own);
  const double patience = reader.number("noisy", patience_);
  factor_ = reader.number("noisy_factor", factor_);
  weight_ = reader.number("noisy_weight", weight_);
  reader.finish();
  WINNOW_THROW_IF_NOT(patience >= 1.0 && patience <= 255.0 && patience == std::floor(patience),
                      "policy '{}': noisy (epochs of high loss before a sample is a suspect) must "
                      "be a whole number from 1 to 255, got {}",
                      spec.to_string(), patience);
  WINNOW_THROW_IF_NOT(factor_ > 1.0, "policy '{}': noisy_factor must be above 1, got {}",
                      spec.to_string(), factor_);
  WINNOW_THROW_IF_NOT(weight_ >= 0.0 && weight_ < 1.0,
                      "policy '{}': noisy_weight must be in [0, 1), got {}", spec.to_string(),
                      weight_);
  patience_ = static_cast<std::uint32_t>(patience);
  status_.assign(num_samples, 0);
}

PolicySpec NoiseAwarePolicy::spec() const {
  PolicySpec out = inner_->spec();
  out.params["noisy"] = format_number(patience_);
  out.params["noisy_factor"] = format_number(factor_);
  out.params["noisy_weight"] = format_number(weight_);
  return out;
}

void NoiseAwarePolicy::observe(const ScoreTable& before, const std::uint64_t* ids,
                               const float* losses, std::size_t count) {
  inner_->observe(before, ids, losses, count);
  for (std::size_t i = 0; i < count; ++i) status_[ids[i]] |= kSeen;
}

namespace {

void check_ids(const char* what, const std::uint64_t* ids, std::size_t count, std::size_t size) {
  for (std::size_t i = 0; i < count; ++i) {
    WINNOW_THROW_IF_NOT(ids[i] < size,
                        "{}: sample id {} at position {} is out of range (the data set has {} "
                        "samples)",
                        what, ids[i], i, size);
  }
}

}  // namespace

void NoiseAwarePolicy::flag(const std::uint64_t* ids, std::size_t count) {
  check_ids("flag_label_issues", ids, count, status_.size());
  for (std::size_t i = 0; i < count; ++i) {
    if ((status_[ids[i]] & kTrusted) == 0) status_[ids[i]] |= kFlagged;
  }
}

void NoiseAwarePolicy::trust(const std::uint64_t* ids, std::size_t count) {
  check_ids("trust_labels", ids, count, status_.size());
  for (std::size_t i = 0; i < count; ++i) {
    status_[ids[i]] = (status_[ids[i]] & ~kFlagged) | kTrusted;
  }
}

bool NoiseAwarePolicy::suspect(std::uint64_t id) const {
  const std::uint32_t s = status_[id];
  if ((s & kTrusted) != 0) return false;
  return (s & kFlagged) != 0 || (s & kStreak) >= patience_;
}

void NoiseAwarePolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  // Streaks: a sample trained on since the last plan extends its streak when
  // its score is still high, or ends it; one not trained on keeps it.
  const auto high = static_cast<float>(factor_ * scores.mean());
  const float* s = scores.data();
  for (std::uint64_t i = 0; i < status_.size(); ++i) {
    std::uint32_t& st = status_[i];
    if ((st & kSeen) == 0) continue;
    std::uint32_t streak = st & kStreak;
    streak = s[i] > high ? std::min<std::uint32_t>(streak + 1, kStreak) : 0;
    st = (st & (kFlagged | kTrusted)) | streak;
  }

  inner_->plan(scores, rng, plan);

  // Suspects get a second palette entry per weight: code c -> c + P.
  const std::size_t p = plan.palette.size();
  WINNOW_THROW_IF_NOT(
      2 * p <= 256, "policy '{}': {} weights leave no room for the noise-aware ones (at most 128)",
      spec().to_string(), p);
  if (plan.weight_codes.empty()) plan.weight_codes.assign(plan.size(), 0);
  const bool by_id = plan.codes_by_id.size() == plan.num_samples;
  bool any = false;
  for (std::uint64_t pos = 0; pos < plan.size(); ++pos) {
    const std::uint64_t id = plan.ids[pos];
    if (!suspect(id)) continue;
    any = true;
    const auto code = static_cast<std::uint8_t>(plan.weight_codes[pos] + p);
    plan.weight_codes[pos] = code;
    if (by_id) plan.codes_by_id[id] = code;
  }
  if (!any) {
    if (p == 1) plan.weight_codes.clear();  // every weight is still 1
    return;
  }
  for (std::size_t c = 0; c < p; ++c) {
    plan.palette.push_back(static_cast<float>(plan.palette[c] * weight_));
  }
}

std::vector<float> NoiseAwarePolicy::state() const {
  std::vector<float> out = inner_->state();
  out.reserve(out.size() + status_.size());
  for (std::uint32_t st : status_) out.push_back(static_cast<float>(st));
  return out;
}

void NoiseAwarePolicy::set_state(const std::vector<float>& state) {
  const std::size_t n = status_.size();
  WINNOW_THROW_IF_NOT(state.size() >= n, "policy '{}': state holds {} values, expected at least {}",
                      spec().to_string(), state.size(), n);
  const std::size_t inner_size = state.size() - n;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = state[inner_size + i];
    WINNOW_THROW_IF_NOT(v >= 0.0f && v < 2048.0f && v == std::floor(v),
                        "policy '{}': noise state of sample {} is {}, not a status",
                        spec().to_string(), i, v);
    status_[i] = static_cast<std::uint32_t>(v);
  }
  inner_->set_state(
      std::vector<float>(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(inner_size)));
}

}  // namespace winnow
