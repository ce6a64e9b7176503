// Policy: decides, for one pruning epoch, which samples to visit and with
// which loss weight. The schedule around it (warm-up epoch, annealing) belongs
// to DynamicPruner, so a policy only answers "given these scores, what now?".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "winnow/pruning/epoch_plan.h"
#include "winnow/pruning/policy_spec.h"
#include "winnow/pruning/random.h"
#include "winnow/pruning/score_table.h"

namespace winnow {

class Policy {
 public:
  virtual ~Policy() = default;

  // The spec that recreates this policy, every parameter spelled out.
  virtual PolicySpec spec() const = 0;

  // Fills plan.ids (a shuffled subset, no repeats), plan.weight_codes,
  // plan.palette and plan.candidates for one pruning epoch.
  virtual void plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) = 0;

  // False for policies that never prune ("full").
  virtual bool prunes() const { return true; }
  // True when the policy needs observed scores: epoch 0 then trains on all data.
  virtual bool needs_scores() const { return true; }
  // EMA momentum the score table should use for this policy (0: last loss).
  virtual float score_momentum() const { return 0.0f; }

  // A saving budget ("save=F" in the spec): the share of the whole run's
  // forward samples to save, 0 when the policy prunes by a fixed ratio.
  // DynamicPruner then calls aim() before every pruned plan with the share of
  // all samples that plan should skip (docs/pruning.md#a-saving-budget).
  virtual double target_saving() const { return 0.0; }
  virtual void aim(double /*share*/) {}

  // Per-sample state beyond the score table (UCB's loss spread). Called with
  // the table *before* the new losses are written; ids and losses are checked.
  virtual void observe(const ScoreTable& /*before*/, const std::uint64_t* /*ids*/,
                       const float* /*losses*/, std::size_t /*count*/) {}
  // True when observe() does something: adapters that record scores
  // elsewhere (a GPU) must then replay every observation, not just the scores.
  virtual bool observes() const { return false; }
  virtual std::vector<float> state() const { return {}; }
  virtual void set_state(const std::vector<float>& state);
  virtual std::uint64_t state_bytes() const { return 0; }
};

}  // namespace winnow
