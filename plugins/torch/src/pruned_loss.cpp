#include "winnow/torch/pruned_loss.h"

#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "fused_loss_step.h"
#include "tensor_shape.h"
#include "winnow/error.h"
#if defined(WINNOW_TORCH_HAS_CUDA)
#include "torch_cuda_stream.h"
#endif

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

// Whether `pruner`'s observations on `device` take the fused step: its
// policy has no observe() hook to replay them to, and the step runs there (a
// loop on the CPU, a kernel on a CUDA device when winnow has its CUDA kernels).
bool takes_fused_step(const DynamicPruner& pruner, const at::Device& device) {
  const bool runs_there =
      device.is_cpu() || (device.is_cuda() && detail::fused_loss_step_has_cuda());
  return runs_there && !pruner.policy().observes();
}

void* stream_of(const at::Device& device) {
#if defined(WINNOW_TORCH_HAS_CUDA)
  if (device.is_cuda()) return detail::current_cuda_stream(device);
#endif
  (void)device;
  return nullptr;
}

// The loss scaled by the plan's weights, computed by the fused step: forward
// returns its `weighted` output, backward scales the gradient by the same
// weights, as autograd would through loss * weights.
class PlanWeightedLoss : public torch::autograd::Function<PlanWeightedLoss> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& loss,
                            const at::Tensor& weighted, const at::Tensor& weights) {
    ctx->save_for_backward({weights});
    return weighted.to(loss.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const at::Tensor weights = ctx->get_saved_variables()[0];
    return {grad[0] * weights.to(grad[0].scalar_type()), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

// The device side: the current plan's weights as a device tensor, and every
// observation of the epoch kept on the device in call order. At the score
// sync (before each plan) the log comes to the host in one transfer and is
// replayed through DynamicPruner::update, one call per step as recorded, so
// the policy sees exactly what the host path would have shown it (its
// observe() hook, the score EMA, RePB's windows, the noise-aware suspects);
// only the time of the update differs. Checks of the values also wait for
// the host: a step costs the copy of its ids, one copy of its losses and the
// weighted mean, and never synchronises.
//
// Policies without an observe() hook (infobatch, uniform, seta, ...) take the
// fused step instead of the log where it can run (the CPU, or CUDA with
// winnow's kernels): one pass gathers the weights, scales the losses and
// writes the scores into a device copy of the score table, which crosses to
// the host in one transfer at the sync. Its checks count the invalid
// observations on the device, reported at the sync like the log's.
struct PrunedLoss::DeviceState {
  at::Device device;
  bool fused = false;
  at::Tensor weights;              // [N] float32
  std::vector<at::Tensor> ids;     // log: [B] int64 per call, as given (maybe out of range)
  std::vector<at::Tensor> losses;  // log: [B] float32 per call
  at::Tensor scores;               // fused: [N] float32, the score table
  at::Tensor invalid;              // fused: [1] int64, observations not recorded
  bool scores_written = false;     // fused: steps since the last sync
  std::uint64_t generation = 0;

  DeviceState(at::Device d, const DynamicPruner& pruner)
      : device(d), fused(takes_fused_step(pruner, d)) {}

  // Forgets what was recorded since the last sync (the log, the fused step's
  // writes and its count of invalid observations).
  void drop_recorded() {
    ids.clear();
    losses.clear();
    scores_written = false;
    if (invalid.defined()) invalid.zero_();
  }

  // Throws for the observations a sync skipped.
  void report_skipped(std::int64_t bad) const {
    WINNOW_THROW_IF_NOT(bad == 0,
                        "PrunedLoss: {} observations reported on {} since the last plan had an id "
                        "out of range or a non-finite or negative loss; they were skipped",
                        bad, device.str());
  }

  // Uploads the current plan's weights (once per plan), and for the fused
  // step the host's scores, which the last sync made current. Anything still
  // recorded belongs to a run the pruner was restored over (a sync empties
  // the record before every plan), so it is dropped; a restored pruner may
  // also have another policy, so the choice of path is made again.
  void refresh(DynamicPruner& pruner) {
    drop_recorded();
    fused = takes_fused_step(pruner, device);
    const std::uint64_t n = pruner.num_samples();
    at::Tensor host_weights = at::empty({static_cast<std::int64_t>(n)}, at::kFloat);
    float* w = host_weights.data_ptr<float>();
    for (std::uint64_t id = 0; id < n; ++id) w[id] = pruner.weight_table()[id];
    weights = host_weights.to(device);
    if (fused) {
      scores = at::from_blob(const_cast<float*>(pruner.scores().data()),
                             {static_cast<std::int64_t>(n)}, at::kFloat)
                   .to(device, /*non_blocking=*/false, /*copy=*/true);
      if (!invalid.defined()) {
        invalid = at::zeros({1}, at::TensorOptions().dtype(at::kLong).device(device));
      }
    }
    generation = pruner.plan_generation();
  }

  // The fused step for one call; returns mean(w_i * l_i) with autograd.
  at::Tensor fused_step(const DynamicPruner& pruner, const at::Tensor& per_sample_loss,
                        const at::Tensor& id_device) {
    const at::Tensor loss = per_sample_loss.detach().to(device, at::kFloat).contiguous();
    const at::Tensor step_ids = id_device.contiguous();
    at::Tensor weighted = at::empty_like(loss);
    at::Tensor gathered = at::empty_like(loss);
    detail::FusedLossStep step;
    step.losses = loss.data_ptr<float>();
    step.ids = step_ids.data_ptr<std::int64_t>();
    step.count = loss.numel();
    step.weights = weights.data_ptr<float>();
    step.scores = scores.data_ptr<float>();
    step.num_samples = static_cast<std::int64_t>(pruner.num_samples());
    step.momentum = pruner.scores().momentum();
    step.allow_negative = pruner.allows_negative_losses();
    step.weighted = weighted.data_ptr<float>();
    step.gathered = gathered.data_ptr<float>();
    // int64 and unsigned long long share their size and layout.
    step.invalid = reinterpret_cast<unsigned long long*>(invalid.data_ptr<std::int64_t>());
    if (device.is_cpu()) {
      detail::run_fused_loss_step_on_host(step);
    } else {
      detail::launch_fused_loss_step(step, stream_of(device));
    }
    scores_written = true;
    return PlanWeightedLoss::apply(per_sample_loss, weighted, gathered).mean();
  }

  // The score-sync hook. Fused: the device's score table replaces the host's
  // (it started from it at the last refresh), then the invalid observations
  // are reported. Log: brings the log to the host and replays it; skips and
  // reports the observations that the host path would have refused.
  void pull(DynamicPruner& pruner) {
    if (pruner.plan_generation() != generation) {
      // The pruner was restored from a saved state since these observations
      // were recorded (a plan is built only after a pull): they belong to the
      // run it replaced, so they are dropped, not written over the restored
      // scores.
      drop_recorded();
      return;
    }
    if (fused) {
      if (!scores_written) return;
      const at::Tensor host_scores = scores.to(at::kCPU).contiguous();
      const std::int64_t bad = invalid.item<std::int64_t>();
      invalid.zero_();
      scores_written = false;
      pruner.assign_scores(host_scores.data_ptr<float>(), pruner.num_samples());
      report_skipped(bad);
      return;
    }
    if (ids.empty()) return;
    std::vector<std::int64_t> sizes;
    for (const at::Tensor& t : ids) sizes.push_back(t.size(0));
    const at::Tensor all_ids = at::cat(ids).to(at::kCPU).contiguous();
    const at::Tensor all_losses = at::cat(losses).to(at::kCPU).contiguous();
    ids.clear();
    losses.clear();
    const auto* id_ptr = all_ids.data_ptr<std::int64_t>();
    const float* loss_ptr = all_losses.data_ptr<float>();
    const std::uint64_t n = pruner.num_samples();
    const bool negatives = pruner.allows_negative_losses();
    std::vector<std::uint64_t> call_ids;
    std::vector<float> call_losses;
    std::uint64_t bad = 0;
    std::int64_t offset = 0;
    for (const std::int64_t size : sizes) {
      call_ids.clear();
      call_losses.clear();
      for (std::int64_t i = offset; i < offset + size; ++i) {
        // A negative id becomes a huge one, out of every data set's range.
        const auto id = static_cast<std::uint64_t>(id_ptr[i]);
        if (!valid_observation(id, loss_ptr[i], n, negatives)) {
          ++bad;
          continue;
        }
        call_ids.push_back(id);
        call_losses.push_back(loss_ptr[i]);
      }
      if (!call_ids.empty()) pruner.update(call_ids.data(), call_losses.data(), call_ids.size());
      offset += size;
    }
    report_skipped(static_cast<std::int64_t>(bad));
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
  state_ = std::make_shared<DeviceState>(device, *pruner_);
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
  if (state.fused) {
    // Ids from the CPU are checked at once, as on the host path; ids already
    // on the device are checked by the step itself (weight 0 and counted).
    const at::Tensor id_device =
        ids.is_cpu() ? host_ids(ids, n).to(state.device) : ids.to(state.device, at::kLong);
    return state.fused_step(*pruner_, per_sample_loss, id_device);
  }
  at::Tensor id_device;  // for the weight lookup: always in range
  if (ids.is_cpu()) {
    id_device = host_ids(ids, n).to(state.device, /*non_blocking=*/true);
    state.ids.push_back(id_device);
  } else {
    // Checking device ids here would synchronise: log them as given (the
    // replay skips and reports the bad ones) and clamp them for the lookup.
    const at::Tensor raw = ids.to(state.device, at::kLong);
    state.ids.push_back(raw);
    id_device = raw.clamp(0, static_cast<std::int64_t>(n) - 1);
  }
  // A copy: the caller may reuse its loss buffer before the replay.
  state.losses.push_back(
      per_sample_loss.detach().to(state.device, at::kFloat, /*non_blocking=*/false, /*copy=*/true));
  const at::Tensor weights = state.weights.index_select(0, id_device);
  return (per_sample_loss * weights.to(per_sample_loss.scalar_type())).mean();
}

}  // namespace winnow
