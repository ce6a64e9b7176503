// The CUDA kernel of the fused loss step (fused_loss_step.h): one thread per
// observation, in a grid-stride loop. Only the CUDA runtime here: errors go
// back as text and fused_loss_step.cpp throws them.
#include <cuda_runtime.h>

#include "fused_loss_step.h"

namespace winnow::detail {
namespace {

__global__ void fused_loss_step_kernel(FusedLossStep step) {
  unsigned long long invalid = 0;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < step.count; i += stride) {
    invalid += fused_loss_observation(step, i) ? 0 : 1;
  }
  if (invalid != 0 && step.invalid != nullptr) atomicAdd(step.invalid, invalid);
}

}  // namespace

const char* launch_fused_loss_step_kernel(const FusedLossStep& step, void* cuda_stream) {
  if (step.count <= 0) return nullptr;
  constexpr std::int64_t kThreads = 256;
  constexpr std::int64_t kMaxBlocks = 4096;
  const std::int64_t wanted = (step.count + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  fused_loss_step_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(cuda_stream)>>>(step);
  const cudaError_t status = cudaGetLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

}  // namespace winnow::detail
