#include "winnow/torch/pruned_loss.h"

#include "tensor_shape.h"
#include "winnow/error.h"

namespace winnow {
namespace {

void check_shapes(const at::Tensor& loss, const at::Tensor& ids) {
  WINNOW_THROW_IF_NOT(loss.defined(), "PrunedLoss: the loss tensor is undefined");
  WINNOW_THROW_IF_NOT(loss.dim() != 0,
                      "PrunedLoss: the loss is already reduced to a scalar; pass the "
                      "per-sample loss (reduction 'none'), shape [B]");
  WINNOW_THROW_IF_NOT(loss.dim() == 1,
                      "PrunedLoss: the per-sample loss must have shape [B], got {}",
                      detail::shape_of(loss));
  WINNOW_THROW_IF_NOT(at::isFloatingType(loss.scalar_type()),
                      "PrunedLoss: the loss must be a floating-point tensor");
  WINNOW_THROW_IF_NOT(ids.defined() && ids.dim() == 1 && !at::isFloatingType(ids.scalar_type()) &&
                          ids.scalar_type() != at::kBool,
                      "PrunedLoss: ids must be a 1-D integer tensor, got {}",
                      detail::shape_of(ids));
  WINNOW_THROW_IF_NOT(ids.size(0) == loss.size(0),
                      "PrunedLoss: {} losses but {} ids; each sample needs its id", loss.size(0),
                      ids.size(0));
}

// Ids on the host as int64, checked against the data set size.
at::Tensor host_ids(const at::Tensor& ids, std::uint64_t num_samples) {
  at::Tensor out = ids.to(at::kLong).contiguous();
  const auto* p = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    WINNOW_THROW_IF_NOT(p[i] >= 0 && static_cast<std::uint64_t>(p[i]) < num_samples,
                        "PrunedLoss: sample id {} at position {} is out of range (the data set "
                        "has {} samples)",
                        p[i], i, num_samples);
  }
  return out;
}

}  // namespace

// Device copies of the scores and weights, and a count of invalid input seen
// on the device since the scores last came to the host.
struct PrunedLoss::DeviceState {
  at::Device device;
  at::Tensor scores;   // [N] float32
  at::Tensor weights;  // [N] float32
  at::Tensor invalid;  // [] int64
  std::uint64_t generation = 0;

  explicit DeviceState(at::Device d) : device(d) {}

  // Uploads the host scores and the current plan's weights (once per plan).
  void refresh(DynamicPruner& pruner) {
    const std::uint64_t n = pruner.num_samples();
    const auto options = at::TensorOptions().dtype(at::kFloat);
    at::Tensor host_scores = at::from_blob(const_cast<float*>(pruner.scores().data()),
                                           {static_cast<std::int64_t>(n)}, options);
    scores = host_scores.to(device, /*non_blocking=*/false, /*copy=*/true);
    at::Tensor host_weights = at::empty({static_cast<std::int64_t>(n)}, options);
    float* w = host_weights.data_ptr<float>();
    for (std::uint64_t id = 0; id < n; ++id) w[id] = pruner.weight_table()[id];
    weights = host_weights.to(device);
    if (!invalid.defined())
      invalid = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
    generation = pruner.plan_generation();
  }

  // The score-sync hook: brings device scores to the host (one transfer).
  void pull(DynamicPruner& pruner) {
    if (!scores.defined()) return;
    const at::Tensor host = scores.to(at::kCPU).contiguous();
    pruner.assign_scores(host.data_ptr<float>(), static_cast<std::uint64_t>(host.numel()));
    const std::int64_t bad = invalid.item<std::int64_t>();
    if (bad > 0) {
      invalid.zero_();
      WINNOW_THROW(
          "PrunedLoss: {} observations reported on {} since the last plan had an id "
          "out of range or a non-finite or negative loss; they were skipped",
          bad, device.str());
    }
  }
};

PrunedLoss::PrunedLoss(std::shared_ptr<DynamicPruner> pruner, at::Device device, Mode mode)
    : pruner_(std::move(pruner)) {
  WINNOW_THROW_IF_NOT(pruner_ != nullptr, "PrunedLoss: the pruner is null");
  const bool on_device =
      mode == Mode::DeviceTables || (mode == Mode::Automatic && !device.is_cpu());
  WINNOW_THROW_IF_NOT(on_device || device.is_cpu(),
                      "PrunedLoss: the host-table mode records scores on the CPU; use it with "
                      "device cpu, not {}",
                      device.str());
  if (!on_device) return;
  WINNOW_THROW_IF_NOT(!pruner_->has_score_sync(),
                      "PrunedLoss: this pruner already records scores on a device through another "
                      "PrunedLoss; use one loss helper per pruner");
  state_ = std::make_shared<DeviceState>(device);
  std::weak_ptr<DeviceState> weak = state_;
  pruner_->set_score_sync([weak](DynamicPruner& p) {
    if (auto state = weak.lock()) state->pull(p);
  });
}

PrunedLoss::~PrunedLoss() {
  if (!state_ || !pruner_) return;
  // Leave the host table current and unhook; never throw from a destructor.
  try {
    pruner_->sync_scores();
  } catch (...) {
  }
  pruner_->set_score_sync(nullptr);
}

PrunedLoss::PrunedLoss(PrunedLoss&&) noexcept = default;
PrunedLoss& PrunedLoss::operator=(PrunedLoss&&) noexcept = default;

at::Device PrunedLoss::device() const {
  return state_ ? state_->device : at::Device(at::kCPU);
}

at::Tensor PrunedLoss::operator()(const at::Tensor& per_sample_loss, const at::Tensor& ids) {
  check_shapes(per_sample_loss, ids);
  const std::uint64_t n = pruner_->num_samples();

  if (!state_) {
    const at::Tensor id_host = host_ids(ids, n);
    const at::Tensor loss_host = per_sample_loss.detach().to(at::kCPU, at::kFloat).contiguous();
    const auto* id_ptr = reinterpret_cast<const std::uint64_t*>(id_host.data_ptr<std::int64_t>());
    const auto count = static_cast<std::size_t>(id_host.numel());
    at::Tensor weights = at::empty({id_host.numel()}, at::kFloat);
    pruner_->weights(id_ptr, count, weights.data_ptr<float>());
    pruner_->update(id_ptr, loss_host.data_ptr<float>(), count);
    return (per_sample_loss * weights.to(per_sample_loss.device(), per_sample_loss.scalar_type()))
        .mean();
  }

  DeviceState& state = *state_;
  if (state.generation != pruner_->plan_generation()) state.refresh(*pruner_);
  at::Tensor id_device;
  const at::Tensor loss = per_sample_loss.detach().to(state.device, at::kFloat);
  at::Tensor valid = at::isfinite(loss);
  if (!pruner_->allows_negative_losses()) valid = valid.logical_and(loss.ge(0));
  if (ids.is_cpu()) {
    id_device = host_ids(ids, n).to(state.device, /*non_blocking=*/true);
  } else {
    // Checking device ids here would synchronise: clamp them, skip the bad ones
    // and count them for the report at the next plan.
    at::Tensor raw = ids.to(state.device, at::kLong);
    const auto limit = static_cast<std::int64_t>(n) - 1;
    valid = valid.logical_and(raw.ge(0).logical_and(raw.le(limit)));
    id_device = raw.clamp(0, limit);
  }
  state.invalid.add_(valid.logical_not().sum());
  const at::Tensor old_scores = state.scores.index_select(0, id_device);
  state.scores.index_put_({id_device}, at::where(valid, loss, old_scores));
  const at::Tensor weights = state.weights.index_select(0, id_device);
  return (per_sample_loss * weights.to(per_sample_loss.scalar_type())).mean();
}

}  // namespace winnow
