// The device step of PrunedLoss, fused into one pass over a step's
// observations: each one's plan weight is gathered, its loss scaled by it,
// and the loss written into the score table. On a CUDA device the pass is one
// kernel launch on the caller's stream with no host synchronisation; on the
// CPU it is a plain loop over the same per-observation code, which is how the
// tests check the arithmetic everywhere. Torch-free: the kernel is compiled
// by nvcc without torch's headers.
#pragma once

#include <cstdint>

#include "winnow/pruning/score_table.h"  // valid_observation

#if defined(__CUDACC__)
#define WINNOW_HOST_DEVICE __host__ __device__
#else
#define WINNOW_HOST_DEVICE
#endif

namespace winnow::detail {

struct FusedLossStep {
  const float* losses = nullptr;      // [count] fp32
  const std::int64_t* ids = nullptr;  // [count], as the caller gave them
  std::int64_t count = 0;
  const float* weights = nullptr;  // [num_samples]: the current plan's weight of every sample
  float* scores = nullptr;         // [num_samples]: the score table; null: not written
  std::int64_t num_samples = 0;
  float momentum = 0.0f;  // score = momentum * score + (1 - momentum) * loss
  bool allow_negative = false;
  float* weighted = nullptr;  // [count] out: losses[i] * weight
  float* gathered = nullptr;  // [count] out: the weight (0 for an id out of range)
  // [1] in/out: observations not recorded (null: not counted)
  unsigned long long* invalid = nullptr;
};

// One observation. Returns whether it is valid by the host path's own rule
// (valid_observation: id in range, loss finite, and >= 0 unless negatives are
// allowed); only valid ones are written to the scores. An id out of range
// weighs 0, so it adds nothing to the loss.
WINNOW_HOST_DEVICE inline bool fused_loss_observation(const FusedLossStep& step, std::int64_t i) {
  const std::int64_t id = step.ids[i];
  const float loss = step.losses[i];
  if (id < 0 || id >= step.num_samples) {
    step.gathered[i] = 0.0f;
    step.weighted[i] = 0.0f;
    return false;
  }
  const float weight = step.weights[id];
  step.gathered[i] = weight;
#if defined(__CUDA_ARCH__)
  // Rounded products and sums, never contracted into a fused multiply-add:
  // the device then computes exactly what the host does.
  step.weighted[i] = __fmul_rn(loss, weight);
#else
  step.weighted[i] = loss * weight;
#endif
  if (!valid_observation(static_cast<std::uint64_t>(id), loss,
                         static_cast<std::uint64_t>(step.num_samples), step.allow_negative)) {
    return false;
  }
  if (step.scores != nullptr) {
    if (step.momentum == 0.0f) {
      step.scores[id] = loss;
    } else {
      const float keep = step.momentum;
      const float take = 1.0f - step.momentum;
#if defined(__CUDA_ARCH__)
      step.scores[id] = __fadd_rn(__fmul_rn(keep, step.scores[id]), __fmul_rn(take, loss));
#else
      step.scores[id] = keep * step.scores[id] + take * loss;
#endif
    }
  }
  return true;
}

// The whole step on the host (CPU tensors).
void run_fused_loss_step_on_host(const FusedLossStep& step);

// The whole step as one kernel on `cuda_stream` (a cudaStream_t; null is the
// legacy default stream), which must belong to the device that holds the
// step's buffers. Never synchronises. Ids repeated within one step are
// written in an unspecified order (a sampler's plan never repeats one).
// Throws winnow::Error when winnow was built without its CUDA kernels
// (-DWINNOW_WITH_CUDA=ON) or when the launch fails.
void launch_fused_loss_step(const FusedLossStep& step, void* cuda_stream);

// Whether launch_fused_loss_step() was compiled (WINNOW_WITH_CUDA=ON).
bool fused_loss_step_has_cuda();

}  // namespace winnow::detail
