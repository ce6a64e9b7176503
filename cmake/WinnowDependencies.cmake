# Every dependency comes from Debian packages (scripts/install-deps installs them).
find_package(fmt REQUIRED)

# LibTorch is optional: without it the torch-free core, its tests and the
# benchmarks still build. Torch's own config is noisy, so it is found quietly.
set(WINNOW_HAVE_TORCH OFF)
if(WINNOW_WITH_TORCH)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(WINNOW_HAVE_TORCH ON)
    message(STATUS "winnow: LibTorch ${Torch_VERSION} found; building the LibTorch plugin and examples")
    # A CUDA-enabled LibTorch (e.g. -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;
    # print(torch.utils.cmake_prefix_path)') on a GPU machine) sets CAFFE2_USE_CUDA;
    # the same sources then train on the GPU with --device cuda.
    if(CAFFE2_USE_CUDA)
      set(WINNOW_HAVE_CUDA ON)
      message(STATUS "winnow: CUDA-enabled LibTorch: examples can train with --device cuda")
    else()
      set(WINNOW_HAVE_CUDA OFF)
      message(STATUS "winnow: no CUDA-enabled LibTorch found; building for the CPU only (--device cuda unavailable)")
    endif()
  else()
    message(STATUS "winnow: LibTorch not found; building the torch-free core only")
  endif()
endif()

# Command-line parsing and JSON output for the tools, benchmarks and examples.
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
