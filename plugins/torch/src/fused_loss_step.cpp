#include "fused_loss_step.h"

#include "winnow/error.h"

namespace winnow::detail {

void run_fused_loss_step_on_host(const FusedLossStep& step) {
  unsigned long long invalid = 0;
  for (std::int64_t i = 0; i < step.count; ++i) {
    invalid += fused_loss_observation(step, i) ? 0 : 1;
  }
  if (step.invalid != nullptr) *step.invalid += invalid;
}

#if defined(WINNOW_HAS_CUDA_KERNELS)
// fused_loss_step.cu: null on success, else the CUDA runtime's error.
const char* launch_fused_loss_step_kernel(const FusedLossStep& step, void* cuda_stream);

void launch_fused_loss_step(const FusedLossStep& step, void* cuda_stream) {
  const char* error = launch_fused_loss_step_kernel(step, cuda_stream);
  WINNOW_THROW_IF_NOT(error == nullptr, "PrunedLoss: the fused loss step failed to launch: {}",
                      error == nullptr ? "" : error);
}

bool fused_loss_step_has_cuda() {
  return true;
}
#else
void launch_fused_loss_step(const FusedLossStep& /*step*/, void* /*cuda_stream*/) {
  WINNOW_THROW(
      "PrunedLoss: this winnow was built without its CUDA kernels; rebuild with "
      "-DWINNOW_WITH_CUDA=ON (needs nvcc: scripts/install-deps installs it)");
}

bool fused_loss_step_has_cuda() {
  return false;
}
#endif

}  // namespace winnow::detail
