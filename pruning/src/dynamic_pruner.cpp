#include "winnow/pruning/dynamic_pruner.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "plan_builder.h"
#include "policies/noise_aware_policy.h"
#include "winnow/error.h"
#include "winnow/pruning/policy_registry.h"
#include "winnow/pruning/pruner_io.h"

namespace winnow {
namespace {

// The policy's own spec: the given one without the schedule's "delta".
PolicySpec policy_part(PolicySpec spec) {
  spec.params.erase("delta");
  return spec;
}

double read_delta(const PolicySpec& spec) {
  const auto it = spec.params.find("delta");
  if (it == spec.params.end()) return DynamicPruner::kDefaultDelta;
  PolicySpec only_delta{spec.name, {{"delta", it->second}}};
  ParamReader reader(only_delta);
  const double delta = reader.number("delta", DynamicPruner::kDefaultDelta);
  WINNOW_THROW_IF_NOT(delta > 0.0 && delta <= 1.0,
                      "policy '{}': delta (share of epochs that may prune) must be in (0, 1], "
                      "got {}",
                      spec.to_string(), delta);
  return delta;
}

const PrunerOptions& checked(const PrunerOptions& o) {
  WINNOW_THROW_IF_NOT(o.num_samples > 0, "DynamicPruner: num_samples must be positive, got 0");
  WINNOW_THROW_IF_NOT(o.num_samples <= detail::kMaxSamples,
                      "DynamicPruner: num_samples {} exceeds the supported maximum 2^56",
                      o.num_samples);
  WINNOW_THROW_IF_NOT(o.num_epochs > 0, "DynamicPruner: num_epochs must be positive, got 0");
  WINNOW_THROW_IF_NOT(o.step_budget == 0 || o.batch_size > 0,
                      "DynamicPruner: fixed-step mode (step_budget {}) needs a positive "
                      "batch_size",
                      o.step_budget);
  WINNOW_THROW_IF_NOT(o.world_size >= 1, "DynamicPruner: world_size must be at least 1, got 0");
  WINNOW_THROW_IF_NOT(o.rank < o.world_size,
                      "DynamicPruner: rank {} is out of range for world_size {} (ranks are 0 "
                      "to world_size - 1)",
                      o.rank, o.world_size);
  return o;
}

std::unique_ptr<Policy> make_checked_policy(const PrunerOptions& o) {
  const PolicySpec spec = policy_part(PolicySpec::parse(o.policy));
  if (!NoiseAwarePolicy::requested(spec)) {
    return PolicyRegistry::instance().make(spec, o.num_samples);
  }
  auto inner = PolicyRegistry::instance().make(NoiseAwarePolicy::inner_spec(spec), o.num_samples);
  return std::make_unique<NoiseAwarePolicy>(std::move(inner), spec, o.num_samples);
}

PrunerOptions basic_options(std::uint64_t num_samples, std::uint64_t num_epochs,
                            const std::string& policy, std::uint64_t seed) {
  PrunerOptions options;
  options.num_samples = num_samples;
  options.num_epochs = num_epochs;
  options.policy = policy;
  options.seed = seed;
  return options;
}

// floor(fraction * count), robust to products such as 0.29 * 100 = 28.999...
std::uint64_t floor_share(double fraction, std::uint64_t count) {
  return static_cast<std::uint64_t>(std::floor(fraction * static_cast<double>(count) + 1e-9));
}

}  // namespace

DynamicPruner::DynamicPruner(const PrunerOptions& options)
    : options_(checked(options)),
      delta_(read_delta(PolicySpec::parse(options.policy))),
      policy_(make_checked_policy(options_)),
      scores_(options.num_samples, options.initial_score, policy_->score_momentum(),
              options.allow_negative_losses),
      weights_(options.num_samples) {}

DynamicPruner::DynamicPruner(std::uint64_t num_samples, std::uint64_t num_epochs,
                             const std::string& policy, std::uint64_t seed)
    : DynamicPruner(basic_options(num_samples, num_epochs, policy, seed)) {}

DynamicPruner::~DynamicPruner() = default;
DynamicPruner::DynamicPruner(DynamicPruner&&) noexcept = default;
DynamicPruner& DynamicPruner::operator=(DynamicPruner&&) noexcept = default;

std::string DynamicPruner::policy_spec() const {
  PolicySpec spec = policy_->spec();
  if (policy_->prunes()) spec.params["delta"] = format_number(delta_);
  return spec.to_string();
}

std::uint64_t DynamicPruner::annealing_epoch() const {
  return floor_share(delta_, options_.num_epochs);
}

PlanKind DynamicPruner::next_kind() const {
  if (!policy_->prunes()) return PlanKind::Full;
  if (epoch_ < first_pruned_epoch()) return PlanKind::Warmup;
  const bool annealing = fixed_step() ? steps_served_ >= floor_share(delta_, options_.step_budget)
                                      : epoch_ >= annealing_epoch();
  return annealing ? PlanKind::Annealing : PlanKind::Pruned;
}

std::string DynamicPruner::budget_note() const {
  const double target = policy_->target_saving();
  if (target <= 0.0 || fixed_step()) return "";
  const std::uint64_t first = first_pruned_epoch();
  const std::uint64_t end = annealing_epoch();
  const std::uint64_t pruned = end > first ? end - first : 0;
  const auto epochs = static_cast<double>(options_.num_epochs);
  const std::string spec = policy_spec();
  if (pruned == 0) {
    return fmt::format(
        "{}: none of the {} epochs may prune (warm-up and annealing), so the run "
        "saves nothing; more epochs would",
        spec, options_.num_epochs);
  }
  const double mean_share = target * epochs / static_cast<double>(pruned);
  if (mean_share <= kBusyBudgetShare) return "";
  if (mean_share > kMaxBudgetShare) {
    return fmt::format(
        "{}: {} of the {} epochs may prune, and each skips at most {:.0f}%, so the "
        "run saves about {:.0f}%, not {:.0f}%; more epochs would reach it",
        spec, pruned, options_.num_epochs, 100.0 * kMaxBudgetShare,
        100.0 * kMaxBudgetShare * static_cast<double>(pruned) / epochs, 100.0 * target);
  }
  return fmt::format(
      "{}: {} of the {} epochs may prune, so each skips {:.0f}% of the samples on "
      "average to save {:.0f}% of the run, which can cost accuracy in a run this "
      "short; a smaller budget (save=, target_saving=) or more epochs would not",
      spec, pruned, options_.num_epochs, 100.0 * mean_share, 100.0 * target);
}

double DynamicPruner::budget_share() const {
  const double target = policy_->target_saving();
  if (fixed_step()) return std::min(target, kMaxBudgetShare);
  // What is left of the budget, in epochs of N samples (no plan is built
  // while planning, so the totals are the finished epochs').
  const RunStats run = totals();
  const double saved =
      static_cast<double>(run.full_forward_samples) - static_cast<double>(run.forward_samples);
  const auto n = static_cast<double>(num_samples());
  const double left = target * static_cast<double>(options_.num_epochs) - saved / n;
  // The pruned epochs' weights rise linearly from 1 - ramp to 1 + ramp.
  const std::uint64_t first = first_pruned_epoch();
  const std::uint64_t end = std::max(annealing_epoch(), epoch_ + 1);
  const double span = static_cast<double>(end - 1 - std::min(first, end - 1));
  auto weight = [&](std::uint64_t e) {
    if (span <= 0.0) return 1.0;
    const double position = static_cast<double>(e > first ? e - first : 0) / span;
    return 1.0 + kBudgetRamp * (2.0 * position - 1.0);
  };
  // The scale s with sum over the epochs left of min(s * weight, cap) = left
  // (bisection: the sum grows with s); this epoch skips min(s * weight, cap).
  auto planned = [&](double scale) {
    double sum = 0.0;
    for (std::uint64_t e = epoch_; e < end; ++e)
      sum += std::min(scale * weight(e), kMaxBudgetShare);
    return sum;
  };
  if (left <= 0.0) return 0.0;
  double low = 0.0, high = kMaxBudgetShare / (1.0 - kBudgetRamp);
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (low + high);
    (planned(mid) < left ? low : high) = mid;
  }
  return std::min(high * weight(epoch_), kMaxBudgetShare);
}

void DynamicPruner::sync_scores() {
  if (score_sync_) score_sync_(*this);
}

void DynamicPruner::build_plan() {
  sync_scores();
  // The finished plan's buffers are reused for the new one (no fresh pages).
  // Until the new plan is complete, no plan is "built": a failure here leaves
  // the pruner consistent, and a later call simply plans again.
  plan_built_ = false;
  EpochPlan plan = std::move(plan_);
  plan_ = EpochPlan{};
  // ids and weight_codes keep their length: finish_plan() sizes them, and
  // only growth beyond the previous plan is zero-filled.
  plan.codes_by_id.clear();
  plan.palette = {1.0f};
  plan.candidates = 0;
  plan.epoch = epoch_;
  plan.num_samples = num_samples();
  plan.kind = next_kind();
  Rng rng = Rng::for_epoch(options_.seed, epoch_);
  if (plan.kind == PlanKind::Full || plan.kind == PlanKind::Pruned) {
    if (plan.kind == PlanKind::Pruned && policy_->target_saving() > 0.0) {
      policy_->aim(budget_share());
    }
    policy_->plan(scores_, rng, plan);
  } else {
    // Warm-up and annealing: every sample, weight 1 (all weights reset).
    detail::plan_all(num_samples(), rng, plan);
  }
  WINNOW_THROW_IF_NOT(!plan.ids.empty(), "policy '{}' planned an empty epoch {}", policy_spec(),
                      epoch_);
  if (fixed_step()) {
    // The stream ends exactly at the budget: cut the last pass short (each
    // of the W ranks serves `left` more batches).
    const std::uint64_t left = options_.step_budget - steps_served_;
    const std::uint64_t w = options_.world_size;
    if (steps_for(steps_for(plan.size(), w), options_.batch_size) > left) {
      const std::uint64_t keep = left * options_.batch_size * w;
      plan.ids.resize(keep);
      if (!plan.weight_codes.empty()) {
        plan.weight_codes.resize(keep);
        plan.codes_by_id.clear();  // it still holds the cut entries' codes
      }
    }
  }
  weights_.take(plan);
  plan_ = std::move(plan);
  build_shard();
  plan_built_ = true;
  epoch_finished_ = false;
  cursor_ = 0;
  ++plan_generation_;
}

std::uint64_t DynamicPruner::shard_size() const {
  return sharded() ? shard_.size() : plan_.size();
}

void DynamicPruner::build_shard() {
  shard_.clear();
  if (!sharded()) return;
  // Positions [r*L, (r+1)*L) of the plan extended by wrap-around to W*L.
  const std::uint64_t p = plan_.size();
  const std::uint64_t l = steps_for(p, options_.world_size);
  shard_.resize(l);
  const std::uint64_t start = options_.rank * l;
  for (std::uint64_t j = 0; j < l; ++j) shard_[j] = plan_.ids[(start + j) % p];
}

const std::vector<std::uint64_t>& DynamicPruner::shard() {
  plan();
  return sharded() ? shard_ : plan_.ids;
}

std::uint64_t DynamicPruner::plan_hash() {
  return winnow::plan_hash(plan());
}

void DynamicPruner::advance_epoch() {
  ++epoch_;
  plan_built_ = false;
  epoch_finished_ = false;
  cursor_ = 0;
}

const EpochPlan& DynamicPruner::plan() {
  if (!plan_built_) build_plan();
  return plan_;
}

const EpochPlan& DynamicPruner::begin_epoch() {
  if (!plan_built_) {
    build_plan();
    return plan_;
  }
  // In fixed-step mode one stream spans all passes: restarting a loader
  // continues it rather than starting it over.
  if (fixed_step()) return plan_;
  if (cursor_ == 0 && !epoch_finished_) return plan_;
  if (!epoch_finished_) finish_epoch();
  advance_epoch();
  build_plan();
  return plan_;
}

std::optional<PlanBatch> DynamicPruner::next_batch(std::uint64_t batch_size) {
  WINNOW_THROW_IF_NOT(batch_size > 0, "next_batch: batch_size must be positive, got 0");
  WINNOW_THROW_IF_NOT(!fixed_step() || batch_size == options_.batch_size,
                      "next_batch: fixed-step mode was set up for batches of {}, asked for {}",
                      options_.batch_size, batch_size);
  if (!plan_built_) build_plan();
  if (epoch_finished_) {
    if (!fixed_step() || steps_served_ >= options_.step_budget) return std::nullopt;
    advance_epoch();
    build_plan();
  }
  const std::uint64_t size = shard_size();
  const std::uint64_t* ids = sharded() ? shard_.data() : plan_.ids.data();
  const std::uint64_t count = std::min<std::uint64_t>(batch_size, size - cursor_);
  PlanBatch batch{ids + cursor_, static_cast<std::size_t>(count), cursor_, epoch_};
  cursor_ += count;
  ++steps_served_;
  // Statistics are complete as soon as the last batch is out; the plan and
  // its weights stay until the next epoch begins, so late updates are fine.
  if (cursor_ == size) finish_epoch();
  return batch;
}

void DynamicPruner::finish_epoch() {
  if (!plan_built_) build_plan();
  if (epoch_finished_) return;
  EpochStats stats;
  stats.epoch = epoch_;
  stats.kind = plan_.kind;
  stats.planned_samples = plan_.size();
  stats.forward_samples = cursor_ * options_.world_size;  // all ranks, in lockstep
  stats.full_forward_samples = num_samples();
  stats.candidates = plan_.candidates;
  history_.push_back(stats);
  epoch_finished_ = true;
}

void DynamicPruner::update(const std::uint64_t* ids, const float* losses, std::size_t count) {
  check_observations(ids, losses, count, num_samples(), options_.allow_negative_losses);
  policy_->observe(scores_, ids, losses, count);
  scores_.write_checked(ids, losses, count);
}

void DynamicPruner::update_batch_loss(const std::uint64_t* ids, std::size_t count, float batch_loss,
                                      float momentum) {
  const std::vector<float> losses(count, batch_loss);
  update_batch_losses(ids, losses.data(), count, momentum);
}

void DynamicPruner::update_batch_losses(const std::uint64_t* ids, const float* batch_losses,
                                        std::size_t count, float momentum) {
  WINNOW_THROW_IF_NOT(momentum >= 0.0f && momentum < 1.0f,
                      "update_batch_loss: momentum must be in [0, 1), got {}", momentum);
  // The batch's loss stands for each sample's: the same checks and the same
  // observation (window, spread) as update() would make.
  check_observations(ids, batch_losses, count, num_samples(), options_.allow_negative_losses);
  policy_->observe(scores_, ids, batch_losses, count);
  scores_.blend_checked(ids, batch_losses, count, momentum);
}

namespace {

NoiseAwarePolicy& noise_aware_of(Policy& policy, const char* what, const std::string& spec) {
  auto* noise_aware = dynamic_cast<NoiseAwarePolicy*>(&policy);
  WINNOW_THROW_IF_NOT(noise_aware != nullptr,
                      "{}: policy '{}' is not noise-aware; add noisy=P to its spec (e.g. "
                      "infobatch(noisy=3))",
                      what, spec);
  return *noise_aware;
}

}  // namespace

void DynamicPruner::flag_label_issues(const std::uint64_t* ids, std::size_t count) {
  noise_aware_of(*policy_, "flag_label_issues", policy_spec()).flag(ids, count);
}

void DynamicPruner::trust_labels(const std::uint64_t* ids, std::size_t count) {
  noise_aware_of(*policy_, "trust_labels", policy_spec()).trust(ids, count);
}

float DynamicPruner::mean_weight(const std::uint64_t* ids, std::size_t count) const {
  WINNOW_THROW_IF_NOT(count > 0, "mean_weight: the batch is empty");
  std::vector<float> w(count);
  weights(ids, count, w.data());
  double sum = 0.0;
  for (float x : w) sum += x;
  return static_cast<float>(sum / static_cast<double>(count));
}

void DynamicPruner::weights(const std::uint64_t* ids, std::size_t count, float* out) const {
  for (std::size_t i = 0; i < count; ++i) {
    WINNOW_THROW_IF_NOT(ids[i] < num_samples(),
                        "weights: sample id {} at position {} is out of range (the data set "
                        "has {} samples)",
                        ids[i], i, num_samples());
  }
  for (std::size_t i = 0; i < count; ++i) out[i] = weights_[ids[i]];
}

float DynamicPruner::weight(std::uint64_t id) const {
  float w = 0.0f;
  weights(&id, 1, &w);
  return w;
}

std::uint64_t DynamicPruner::steps_this_epoch(std::uint64_t batch_size) {
  plan();
  return steps_for(shard_size(), batch_size);
}

std::uint64_t DynamicPruner::total_planned_steps(std::uint64_t batch_size) {
  WINNOW_THROW_IF_NOT(batch_size > 0, "total_planned_steps: batch_size must be positive, got 0");
  if (fixed_step()) {
    WINNOW_THROW_IF_NOT(batch_size == options_.batch_size,
                        "total_planned_steps: fixed-step mode was set up for batches of {}, "
                        "asked for {}",
                        options_.batch_size, batch_size);
    return options_.step_budget;
  }
  std::uint64_t total = 0;
  const std::uint64_t w = options_.world_size;
  for (const EpochStats& e : history_) total += steps_for(e.forward_samples / w, batch_size);
  std::uint64_t next_unplanned = epoch_;
  if (plan_built_) {
    if (!epoch_finished_) total += steps_for(shard_size(), batch_size);
    next_unplanned = epoch_ + 1;
  }
  const std::uint64_t later =
      options_.num_epochs > next_unplanned ? options_.num_epochs - next_unplanned : 0;
  return total + later * steps_for(steps_for(num_samples(), w), batch_size);
}

RunStats DynamicPruner::totals() const {
  RunStats run;
  run.epochs = history_.size();
  for (const EpochStats& e : history_) {
    run.forward_samples += e.forward_samples;
    run.full_forward_samples += e.full_forward_samples;
  }
  if (plan_built_ && !epoch_finished_) run.forward_samples += cursor_ * options_.world_size;
  if (fixed_step()) run.full_forward_samples = options_.num_epochs * num_samples();
  return run;
}

std::uint64_t DynamicPruner::state_bytes() const {
  return scores_.bytes() + weights_.bytes() + policy_->state_bytes();
}

void DynamicPruner::assign_scores(const float* scores, std::uint64_t count) {
  scores_.assign(scores, count);
}

void DynamicPruner::restore(DynamicPruner&& restored) {
  ScoreSync hook = std::move(score_sync_);
  const std::uint64_t generation = plan_generation_;
  *this = std::move(restored);
  score_sync_ = std::move(hook);
  plan_generation_ = generation + 1;
}

void DynamicPruner::save(const std::string& path) const {
  save_pruner(*this, path);
}

DynamicPruner DynamicPruner::load(const std::string& path) {
  return load_pruner(path);
}

DynamicPruner DynamicPruner::load_for_rank(const std::string& path, std::uint64_t world_size,
                                           std::uint64_t rank) {
  DynamicPruner pruner = load_pruner(path);
  WINNOW_THROW_IF_NOT(pruner.world_size() == world_size && pruner.rank() == rank,
                      "pruner state '{}' was saved by rank {} of {} ranks, but is loaded by "
                      "rank {} of {}; each rank must resume from its own file with the same "
                      "world size",
                      path, pruner.rank(), pruner.world_size(), rank, world_size);
  return pruner;
}

}  // namespace winnow
