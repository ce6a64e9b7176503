// The raw cudaStream_t that LibTorch is using on a CUDA device, so winnow's own
// kernels run in order with the caller's tensor operations.
#pragma once

#include <ATen/ATen.h>

namespace winnow::detail {

// Defined only when LibTorch has CUDA (torch_cuda_stream.cpp); without it no
// tensor can live on a CUDA device and the caller never asks.
void* current_cuda_stream(const at::Device& device);

}  // namespace winnow::detail
