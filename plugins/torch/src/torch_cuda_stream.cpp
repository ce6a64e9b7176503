// Compiled only against a CUDA-enabled LibTorch (WINNOW_HAVE_CUDA), whose CUDA
// headers give the current stream; Debian's LibTorch has none.
#include <ATen/cuda/CUDAContext.h>

#include "torch_cuda_stream.h"

namespace winnow::detail {

void* current_cuda_stream(const at::Device& device) {
  return at::cuda::getCurrentCUDAStream(device.index()).stream();
}

}  // namespace winnow::detail
