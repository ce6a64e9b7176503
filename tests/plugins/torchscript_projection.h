// A TorchScript module for the embedder tests: a fixed linear projection of
// [B, 1, 28, 28] to [B, rows of weight], saved from C++ (Module::define).
#pragma once

#include <torch/script.h>

#include <string>

namespace winnow::test {

inline void save_projection(const std::string& path, const ::torch::Tensor& weight) {
  ::torch::jit::Module m("Projection");
  m.register_parameter("weight", weight, /*is_buffer=*/false);
  m.define(R"(
def forward(self, x):
    return x.reshape([x.size(0), -1]).matmul(self.weight.t())
)");
  m.save(path);
}

}  // namespace winnow::test
