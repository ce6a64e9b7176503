// Small Fashion-MNIST classifiers: [B, 1, 28, 28] images -> [B, 10] logits.
//   mlp: 784-256-10 with ReLU
//   cnn: conv5x5(1->16), BN, ReLU, pool, conv5x5(16->32), ReLU, pool, fc 512-128-10
#pragma once

#include <memory>
#include <string>

#include <torch/nn/module.h>

namespace winnow::examples {

class Classifier : public torch::nn::Module {
 public:
  virtual at::Tensor forward(at::Tensor images) = 0;
};

// Throws winnow::Error for a name other than "mlp" or "cnn".
std::shared_ptr<Classifier> make_classifier(const std::string& name);

}  // namespace winnow::examples
