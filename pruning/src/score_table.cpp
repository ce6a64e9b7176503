#include "winnow/pruning/score_table.h"

#include <cmath>
#include <limits>

#include "huge_pages.h"
#include "winnow/error.h"

namespace winnow {

ScoreTable::ScoreTable(std::uint64_t num_samples, float initial_score, float momentum,
                       bool allow_negative)
    : initial_score_(initial_score), momentum_(momentum), allow_negative_(allow_negative) {
  WINNOW_THROW_IF_NOT(num_samples > 0, "ScoreTable: num_samples must be positive, got 0");
  WINNOW_THROW_IF_NOT(std::isfinite(initial_score),
                      "ScoreTable: initial_score must be finite, got {}", initial_score);
  WINNOW_THROW_IF_NOT(momentum >= 0.0f && momentum < 1.0f,
                      "ScoreTable: momentum must be in [0, 1), got {}", momentum);
  scores_.reserve(num_samples);
  detail::advise_huge_pages(scores_.data(), num_samples * sizeof(float));
  scores_.assign(num_samples, initial_score);
  detail::collapse_huge_pages(scores_.data(), num_samples * sizeof(float));
}

namespace {

// True when every id is in range and every loss finite (and not negative
// unless allowed). Branch-free, so the common case, all valid, costs about a
// cycle per observation; the caller looks for the culprit only on failure.
bool all_valid(const std::uint64_t* ids, const float* losses, std::size_t count,
               std::uint64_t num_samples, bool allow_negative) {
  unsigned valid = 1;
  for (std::size_t i = 0; i < count; ++i) {
    valid &=
        static_cast<unsigned>(valid_observation(ids[i], losses[i], num_samples, allow_negative));
  }
  return valid != 0;
}

}  // namespace

void check_observations(const std::uint64_t* ids, const float* losses, std::size_t count,
                        std::uint64_t num_samples, bool allow_negative) {
  WINNOW_THROW_IF_NOT(count == 0 || (ids != nullptr && losses != nullptr),
                      "scores update: null ids or losses for {} observations", count);
  if (all_valid(ids, losses, count, num_samples, allow_negative)) return;
  for (std::size_t i = 0; i < count; ++i) {
    WINNOW_THROW_IF_NOT(ids[i] < num_samples,
                        "scores update: sample id {} at position {} is out of range "
                        "(the data set has {} samples)",
                        ids[i], i, num_samples);
    WINNOW_THROW_IF_NOT(std::isfinite(losses[i]),
                        "scores update: loss of sample {} at position {} is {}; losses "
                        "must be finite",
                        ids[i], i, losses[i]);
    WINNOW_THROW_IF_NOT(allow_negative || losses[i] >= 0.0f,
                        "scores update: loss of sample {} at position {} is {}; losses must not "
                        "be negative (allow_negative_losses permits them for losses that can "
                        "legitimately be)",
                        ids[i], i, losses[i]);
  }
}

void ScoreTable::update(const std::uint64_t* ids, const float* losses, std::size_t count) {
  check_observations(ids, losses, count, size(), allow_negative_);
  write_checked(ids, losses, count);
}

void ScoreTable::write_checked(const std::uint64_t* ids, const float* losses, std::size_t count) {
  float* scores = scores_.data();
  if (momentum_ == 0.0f) {
    // Ids arrive in shuffled order: prefetching a few writes ahead hides
    // most of the cache misses of the scatter.
    constexpr std::size_t kAhead = 32;
    std::size_t i = 0;
    for (; i + kAhead < count; ++i) {
      __builtin_prefetch(scores + ids[i + kAhead], 1, 0);
      scores[ids[i]] = losses[i];
    }
    for (; i < count; ++i) scores[ids[i]] = losses[i];
  } else {
    const float keep = momentum_;
    const float take = 1.0f - momentum_;
    for (std::size_t i = 0; i < count; ++i) {
      scores[ids[i]] = keep * scores[ids[i]] + take * losses[i];
    }
  }
}

void ScoreTable::blend_checked(const std::uint64_t* ids, const float* batch_losses,
                               std::size_t count, float momentum) {
  float* scores = scores_.data();
  const float take = 1.0f - momentum;
  for (std::size_t i = 0; i < count; ++i) {
    scores[ids[i]] = momentum * scores[ids[i]] + take * batch_losses[i];
  }
}

double ScoreTable::mean() const {
  // Four partial sums let the compiler keep several additions in flight.
  double sum[4] = {0, 0, 0, 0};
  const float* s = scores_.data();
  const std::uint64_t n = scores_.size();
  std::uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    sum[0] += s[i];
    sum[1] += s[i + 1];
    sum[2] += s[i + 2];
    sum[3] += s[i + 3];
  }
  for (; i < n; ++i) sum[0] += s[i];
  return (sum[0] + sum[1] + sum[2] + sum[3]) / static_cast<double>(n);
}

void ScoreTable::assign(const float* scores, std::uint64_t count) {
  WINNOW_THROW_IF_NOT(count == size(),
                      "ScoreTable::assign: got {} scores for a table of {} samples", count, size());
  for (std::uint64_t i = 0; i < count; ++i) {
    WINNOW_THROW_IF_NOT(std::isfinite(scores[i]),
                        "ScoreTable::assign: score of sample {} is {}; scores must be finite", i,
                        scores[i]);
  }
  scores_.assign(scores, scores + count);
}

}  // namespace winnow
