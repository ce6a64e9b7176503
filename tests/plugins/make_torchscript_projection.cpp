// Writes a TorchScript projection module (torchscript_projection.h) for the
// Python tests of winnow.dask, which have no PyTorch of their own:
//   make_torchscript_projection OUT.pt [DIM [SEED]]
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "torchscript_projection.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::cerr << "usage: make_torchscript_projection OUT.pt [DIM [SEED]]\n";
    return 2;
  }
  try {
    const long dim = argc > 2 ? std::stol(argv[2]) : 16;
    ::torch::manual_seed(argc > 3 ? std::stoull(argv[3]) : 1);
    winnow::test::save_projection(argv[1], ::torch::randn({dim, 784}));
  } catch (const std::exception& e) {
    std::cerr << "make_torchscript_projection: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
