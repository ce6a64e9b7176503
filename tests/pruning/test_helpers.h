// Helpers shared by the pruning tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "winnow/error.h"
#include "winnow/pruning/dynamic_pruner.h"
#include "winnow/pruning/epoch_plan.h"
#include "winnow/pruning/score_table.h"

namespace winnow::test {

// True when the plan's ids are distinct and all below N.
inline bool is_subset_permutation(const EpochPlan& plan) {
  std::vector<std::uint64_t> ids = plan.ids;
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) return false;
  return ids.empty() || ids.back() < plan.num_samples;
}

// Serves the whole current epoch in batches and returns the ids in order.
inline std::vector<std::uint64_t> serve_epoch(DynamicPruner& pruner, std::uint64_t batch) {
  std::vector<std::uint64_t> served;
  pruner.begin_epoch();
  while (auto b = pruner.next_batch(batch)) served.insert(served.end(), b->ids, b->ids + b->size);
  return served;
}

// Deterministic pseudo-random losses in [0, 2).
inline std::vector<float> synthetic_losses(std::uint64_t n, std::uint64_t salt) {
  std::vector<float> losses(n);
  std::uint64_t x = 0x12345678ULL + salt * 0x9E3779B97F4A7C15ULL;
  for (auto& l : losses) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    l = static_cast<float>(x % 20000) / 10000.0f;
  }
  return losses;
}

// The winnow::Error that `f` throws, or nullopt when it returns. Any other
// exception (std::bad_alloc) propagates and fails the test.
template <typename F>
std::optional<Error> thrown_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// Scores 0, 1, ..., n-1: mean (n-1)/2, so ids below n/2 are "well learned".
inline ScoreTable ramp_scores(std::uint64_t n) {
  ScoreTable table(n);
  std::vector<float> values(n);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
  table.assign(values.data(), n);
  return table;
}

// Each planned id's weight.
inline std::map<std::uint64_t, float> weights_by_id(const EpochPlan& plan) {
  std::map<std::uint64_t, float> w;
  for (std::uint64_t pos = 0; pos < plan.size(); ++pos) w[plan.ids[pos]] = plan.weight_at(pos);
  return w;
}

inline std::vector<std::uint64_t> iota_ids(std::uint64_t n) {
  std::vector<std::uint64_t> ids(n);
  for (std::uint64_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

}  // namespace winnow::test
