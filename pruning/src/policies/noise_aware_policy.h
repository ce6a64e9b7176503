// Noise-aware option, around any policy: samples that look mislabelled are
// down-weighted instead of always kept. Loss-value pruning keeps a sample
// with a wrong label forever, since its loss stays high (AlignPrune, arXiv
// 2604.07306); here a sample becomes a suspect when its score was above
// `factor` times the mean score at `patience` consecutive epoch boundaries at
// which it had been trained on, or when the caller flags it (winnow's
// curation flags label issues). A suspect's loss weight is multiplied by
// `weight` in every pruned epoch; it stays in the plan, so a sample that was
// only hard (and is learned later) recovers as soon as its loss falls.
// Enabled by "noisy=P" in any spec: "infobatch(noisy=3)",
// "infobatch(noisy=3,noisy_factor=3,noisy_weight=0.25)". Biased by design
// (towards the clean samples). State: 4 bytes per sample, saved with the run.
#pragma once

#include <memory>
#include <vector>

#include "winnow/pruning/policy.h"

namespace winnow {

class NoiseAwarePolicy final : public Policy {
 public:
  // Takes "noisy", "noisy_factor" and "noisy_weight" out of `spec`.
  NoiseAwarePolicy(std::unique_ptr<Policy> inner, const PolicySpec& spec,
                   std::uint64_t num_samples);
  // True when `spec` asks for it (has "noisy").
  static bool requested(const PolicySpec& spec) { return spec.params.count("noisy") > 0; }
  // `spec` without the noise-aware parameters, for the wrapped policy.
  static PolicySpec inner_spec(PolicySpec spec);

  PolicySpec spec() const override;
  void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) override;
  bool prunes() const override { return inner_->prunes(); }
  bool needs_scores() const override { return inner_->needs_scores(); }
  float score_momentum() const override { return inner_->score_momentum(); }
  double target_saving() const override { return inner_->target_saving(); }
  void aim(double share) override { inner_->aim(share); }
  void observe(const ScoreTable& before, const std::uint64_t* ids, const float* losses,
               std::size_t count) override;
  bool observes() const override { return true; }
  std::vector<float> state() const override;
  void set_state(const std::vector<float>& state) override;
  std::uint64_t state_bytes() const override {
    return inner_->state_bytes() + status_.size() * sizeof(std::uint32_t);
  }

  // Marks samples as label issues (curation flags): suspects from now on.
  void flag(const std::uint64_t* ids, std::size_t count);
  // Marks samples whose label a person confirmed (a review verdict): never
  // suspects, whatever their loss; a flag on them is dropped.
  void trust(const std::uint64_t* ids, std::size_t count);
  bool suspect(std::uint64_t id) const;

 private:
  // Per sample: bits 0-7 the streak of high-loss epochs, bit 8 "trained on
  // since the last plan", bit 9 "flagged by the caller", bit 10 "trusted by
  // the caller".
  static constexpr std::uint32_t kStreak = 0xFF;
  static constexpr std::uint32_t kSeen = 1u << 8;
  static constexpr std::uint32_t kFlagged = 1u << 9;
  static constexpr std::uint32_t kTrusted = 1u << 10;

  std::unique_ptr<Policy> inner_;
  std::uint32_t patience_ = 3;
  double factor_ = 3.0;
  double weight_ = 0.25;
  std::vector<std::uint32_t> status_;
};

}  // namespace winnow
