// ScoreTable: the latest loss observed for every sample, 4 bytes per sample.
//
// Samples not seen in an epoch keep their old (stale) score, as InfoBatch
// defines. With momentum m > 0 a score is an exponential moving average:
// score = m * score + (1 - m) * loss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace winnow {

class ScoreTable {
 public:
  // Every sample starts at `initial_score`; when all scores are equal no sample
  // lies strictly below the mean, so the first epoch always trains on all data.
  // Negative losses are rejected unless `allow_negative` is set: one huge
  // negative value would drag the mean the policies threshold on.
  explicit ScoreTable(std::uint64_t num_samples, float initial_score = 1.0f, float momentum = 0.0f,
                      bool allow_negative = false);

  std::uint64_t size() const { return scores_.size(); }
  float operator[](std::uint64_t id) const { return scores_[id]; }
  const float* data() const { return scores_.data(); }
  float initial_score() const { return initial_score_; }
  float momentum() const { return momentum_; }

  // Records one loss per id. Checks every id and loss first, so a bad call
  // (id out of range, NaN, infinite or disallowed negative loss) throws and
  // changes nothing.
  void update(const std::uint64_t* ids, const float* losses, std::size_t count);

  // update() without the checks, for callers that already ran
  // check_observations on the same arrays.
  void write_checked(const std::uint64_t* ids, const float* losses, std::size_t count);

  // Batch loss score (BLS, Zhou et al., CVPR 2026): blends the mean loss of
  // each sample's batch into its score, score = m * score + (1 - m) *
  // batch_loss, for losses with no per-sample value. Unchecked, like
  // write_checked.
  void blend_checked(const std::uint64_t* ids, const float* batch_losses, std::size_t count,
                     float momentum);

  // Mean of all N scores, stale ones included, accumulated in double.
  double mean() const;

  // Replaces all scores at once (restore from a checkpoint, device sync).
  void assign(const float* scores, std::uint64_t count);

  std::uint64_t bytes() const { return scores_.size() * sizeof(float); }

 private:
  std::vector<float> scores_;
  float initial_score_;
  float momentum_;
  bool allow_negative_;
};

// Whether check_observations accepts one observation: the id below
// `num_samples`, the loss finite and, unless `allow_negative`, >= 0 (-0.0
// counts as zero; NaN fails both comparisons). Branch-free, for callers that
// skip bad observations instead of failing (PrunedLoss's device log, and its
// fused step: constexpr, so CUDA code may call it with nvcc's
// --expt-relaxed-constexpr).
constexpr bool valid_observation(std::uint64_t id, float loss, std::uint64_t num_samples,
                                 bool allow_negative) {
  constexpr float kMax = std::numeric_limits<float>::max();
  const float low = allow_negative ? -kMax : 0.0f;
  return static_cast<bool>(static_cast<unsigned>(id < num_samples) &
                           static_cast<unsigned>(loss >= low) &
                           static_cast<unsigned>(loss <= kMax));
}

// Throws winnow::Error (invalid_input) unless every id is below
// `num_samples` and every loss is finite and, unless `allow_negative`, >= 0.
void check_observations(const std::uint64_t* ids, const float* losses, std::size_t count,
                        std::uint64_t num_samples, bool allow_negative = false);

}  // namespace winnow
