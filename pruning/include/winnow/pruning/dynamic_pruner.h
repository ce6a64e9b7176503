// DynamicPruner: dynamic data pruning for one training run, independent of any
// framework (LibTorch and Python adapters are thin layers over it). It keeps a
// score per sample, builds an EpochPlan before every epoch with a Policy inside
// a warm-up/annealing schedule, serves it in batches (per epoch or a fixed step
// budget), gives loss weights and keeps statistics; a plan depends only on
// (seed, epoch, scores). With world_size W > 1 all ranks build the same plan of
// P entries; rank r serves [r*L, (r+1)*L) of it wrapped to W*L, L = ceil(P / W).
// Step counts are per rank, statistics global.
// Details: docs/pruning.md#the-schedule, docs/pruning.md#data-parallel-training-several-ranks
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "winnow/pruning/epoch_plan.h"
#include "winnow/pruning/policy.h"
#include "winnow/pruning/pruning_stats.h"
#include "winnow/pruning/score_table.h"
#include "winnow/pruning/weight_table.h"

namespace winnow {

struct PrunerOptions {
  std::uint64_t num_samples = 0;
  std::uint64_t num_epochs = 0;      // epochs of the full-data run
  std::string policy = "infobatch";  // spec; "delta" is the schedule's, the rest the policy's
  std::uint64_t seed = 0;
  float initial_score = 1.0f;
  std::uint64_t step_budget = 0;  // > 0: fixed-step mode
  std::uint64_t batch_size = 0;   // required in fixed-step mode
  std::uint64_t world_size = 1;   // data-parallel ranks sharing one plan (>= 1)
  std::uint64_t rank = 0;         // this pruner's rank, < world_size
  // update() rejects losses below 0 unless this is set (losses that can be
  // negative, e.g. log-likelihood ratios); see docs/pruning.md.
  bool allow_negative_losses = false;
};

// A batch of the current plan: positions [first, first + size) of this rank's
// shard (of the plan itself when world_size is 1).
struct PlanBatch {
  const std::uint64_t* ids = nullptr;
  std::size_t size = 0;
  std::uint64_t first = 0;
  std::uint64_t epoch = 0;
};

class DynamicPruner {
 public:
  static constexpr double kDefaultDelta = 0.875;
  // A saving budget's most any one plan skips, and how its pruned epochs
  // share it: linearly rising weights from 1 - ramp to 1 + ramp, so the last
  // pruned epoch skips three times the first's (docs/pruning.md#a-saving-budget).
  static constexpr double kMaxBudgetShare = 0.8;
  static constexpr double kBudgetRamp = 0.5;

  explicit DynamicPruner(const PrunerOptions& options);
  DynamicPruner(std::uint64_t num_samples, std::uint64_t num_epochs,
                const std::string& policy = "infobatch", std::uint64_t seed = 0);
  ~DynamicPruner();
  DynamicPruner(DynamicPruner&&) noexcept;
  DynamicPruner& operator=(DynamicPruner&&) noexcept;

  // --- epoch lifecycle ---------------------------------------------------
  // Starts an epoch: finishes the current one if any of it was served and
  // moves to the next; returns its plan. Idempotent while nothing is served,
  // so calling it to size a scheduler before the loader calls it is safe.
  const EpochPlan& begin_epoch();
  // The current epoch's global plan (identical on all ranks), built on first use.
  const EpochPlan& plan();
  // This rank's shard of the current plan: L = ceil(P / W) ids, see above.
  const std::vector<std::uint64_t>& shard();
  // XXH64 of the current plan (ids, weight codes, palette): ranks compare it
  // to check that they serve the same plan.
  std::uint64_t plan_hash();
  // The next batch of the current plan; nullopt once the plan is served (the
  // epoch is then finished) or, in fixed-step mode, once the budget is spent.
  std::optional<PlanBatch> next_batch(std::uint64_t batch_size);
  // Records the current epoch's statistics; later begin_epoch() moves on.
  void finish_epoch();

  // --- per step ------------------------------------------------------------
  // Records per-sample losses (raw, unweighted). Throws on an id out of range,
  // a non-finite loss or a negative one (unless allow_negative_losses), and
  // then changes nothing.
  void update(const std::uint64_t* ids, const float* losses, std::size_t count);
  // Batch-loss-score mode, for losses with no per-sample value: every sample
  // of the batch gets the batch's mean loss blended into its score,
  // score = momentum * score + (1 - momentum) * batch_loss (BLS, arXiv
  // 2604.04681; 0.9 is its reference code's default). Same checks as update().
  static constexpr float kDefaultBatchLossMomentum = 0.9f;
  void update_batch_loss(const std::uint64_t* ids, std::size_t count, float batch_loss,
                         float momentum = kDefaultBatchLossMomentum);
  // The same for several batches at once (e.g. gathered from all ranks):
  // batch_losses[i] is the mean loss of the batch sample ids[i] was in.
  void update_batch_losses(const std::uint64_t* ids, const float* batch_losses, std::size_t count,
                           float momentum = kDefaultBatchLossMomentum);
  // The mean loss weight of a batch: what a batch's mean loss is multiplied
  // by in batch-loss-score mode (the reference's rescaling).
  float mean_weight(const std::uint64_t* ids, std::size_t count) const;

  // Noise-aware policies ("noisy=P" in the spec, docs/pruning.md): marks
  // samples as label issues (e.g. flagged by winnow's curation), so their
  // loss weight is down-weighted from the next plan on. Throws when the
  // policy is not noise-aware or an id is out of range.
  void flag_label_issues(const std::uint64_t* ids, std::size_t count);
  // Noise-aware policies: samples whose label a person confirmed (winnow's
  // review verdicts). They are never down-weighted, whatever their loss, and
  // a flag on them is dropped. Throws as flag_label_issues does.
  void trust_labels(const std::uint64_t* ids, std::size_t count);

  // Loss weights of the current plan for `ids`; throws on an id out of range.
  void weights(const std::uint64_t* ids, std::size_t count, float* out) const;
  float weight(std::uint64_t id) const;

  // --- sizes, for schedulers -------------------------------------------------
  std::uint64_t steps_this_epoch(std::uint64_t batch_size);
  // Steps of the whole run: exact for epochs finished or planned, an upper
  // bound (all data) for epochs not yet planned; exact in fixed-step mode.
  std::uint64_t total_planned_steps(std::uint64_t batch_size);

  // --- read-only state -------------------------------------------------------
  std::uint64_t num_samples() const { return scores_.size(); }
  std::uint64_t num_epochs() const { return options_.num_epochs; }
  std::uint64_t epoch() const { return epoch_; }
  std::uint64_t seed() const { return options_.seed; }
  std::uint64_t world_size() const { return options_.world_size; }
  std::uint64_t rank() const { return options_.rank; }
  double delta() const { return delta_; }
  bool fixed_step() const { return options_.step_budget > 0; }
  std::uint64_t steps_served() const { return steps_served_; }
  std::uint64_t position() const { return cursor_; }
  bool epoch_finished() const { return epoch_finished_; }
  // The policy spec with every parameter spelled out, delta included.
  std::string policy_spec() const;
  const Policy& policy() const { return *policy_; }
  const ScoreTable& scores() const { return scores_; }
  const WeightTable& weight_table() const { return weights_; }
  const PrunerOptions& options() const { return options_; }
  bool allows_negative_losses() const { return options_.allow_negative_losses; }
  // First epoch of the annealing phase (epoch mode).
  std::uint64_t annealing_epoch() const;
  // For a saving budget the run is short for (epoch mode): its pruned epochs
  // must skip more than kBusyBudgetShare of their samples on average, or
  // cannot reach it at all; a sentence that says so and what would help.
  // Empty otherwise.
  std::string budget_note() const;
  static constexpr double kBusyBudgetShare = 0.55;

  const std::vector<EpochStats>& history() const { return history_; }
  RunStats totals() const;
  // Bytes of per-sample state kept between epochs (scores, weights, policy).
  std::uint64_t state_bytes() const;

  // Replaces every score (e.g. from a device copy); throws on size mismatch or
  // a non-finite value.
  void assign_scores(const float* scores, std::uint64_t count);

  // --- scores kept elsewhere (a GPU) -----------------------------------------
  // An adapter that records losses on a device registers a hook that brings
  // them into the host table; it runs before every plan and on sync_scores(),
  // so scores cross to the host once per epoch, not once per step.
  using ScoreSync = std::function<void(DynamicPruner&)>;
  void set_score_sync(ScoreSync sync) { score_sync_ = std::move(sync); }
  bool has_score_sync() const { return static_cast<bool>(score_sync_); }
  void sync_scores();
  // Counts the plans built so far; an adapter compares it to know when to
  // refresh its own copy of the weights.
  std::uint64_t plan_generation() const { return plan_generation_; }
  // Takes over a restored run's whole state (see pruner_io.h) while keeping
  // this object's score-sync hook; adapters see a new plan generation and
  // refresh their copies.
  void restore(DynamicPruner&& restored);

  // --- persistence (see pruner_io.h) -----------------------------------------
  void save(const std::string& path) const;
  static DynamicPruner load(const std::string& path);
  // Loads and checks that the file was saved by rank `rank` of `world_size`.
  static DynamicPruner load_for_rank(const std::string& path, std::uint64_t world_size,
                                     std::uint64_t rank);

 private:
  friend void write_pruner(const DynamicPruner&, std::ostream&);
  friend DynamicPruner read_pruner(std::istream&, const std::string&);

  PlanKind next_kind() const;
  // The first epoch that may prune: 1 after a warm-up epoch for policies that
  // need scores, else 0.
  std::uint64_t first_pruned_epoch() const { return policy_->needs_scores() ? 1 : 0; }
  // Saving-budget policies: the share of all samples the coming pruned plan
  // skips so the whole run saves the budget. What is left of it is spread
  // over the pruned epochs left (this one included) by their ramp weights,
  // no plan above kMaxBudgetShare, so a shortfall in one epoch is made up by
  // the next. In fixed-step mode the run's length is the step budget, and
  // each pruned plan skips the budget's share itself.
  double budget_share() const;
  void build_plan();
  void advance_epoch();
  void build_shard();
  std::uint64_t shard_size() const;
  bool sharded() const { return options_.world_size > 1; }

  PrunerOptions options_;
  double delta_ = kDefaultDelta;
  std::unique_ptr<Policy> policy_;
  ScoreTable scores_;
  WeightTable weights_;

  std::uint64_t epoch_ = 0;
  bool plan_built_ = false;
  bool epoch_finished_ = false;
  EpochPlan plan_;
  std::vector<std::uint64_t> shard_;  // this rank's shard (empty when W = 1)
  std::uint64_t cursor_ = 0;          // positions of this rank's shard served
  std::uint64_t steps_served_ = 0;    // batches served in the whole run
  std::vector<EpochStats> history_;
  ScoreSync score_sync_;
  std::uint64_t plan_generation_ = 0;
};

}  // namespace winnow
