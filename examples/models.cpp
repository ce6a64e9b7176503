#include "models.h"

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include "winnow/error.h"

namespace winnow::examples {
namespace {

namespace F = torch::nn::functional;

class Mlp final : public Classifier {
 public:
  Mlp()
      : hidden_(register_module("hidden", torch::nn::Linear(784, 256))),
        out_(register_module("out", torch::nn::Linear(256, 10))) {}
  at::Tensor forward(at::Tensor images) override {
    return out_->forward(F::relu(hidden_->forward(images.flatten(1))));
  }

 private:
  torch::nn::Linear hidden_;
  torch::nn::Linear out_;
};

class Cnn final : public Classifier {
 public:
  Cnn()
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5)))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(16))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5)))),
        fc1_(register_module("fc1", torch::nn::Linear(512, 128))),
        fc2_(register_module("fc2", torch::nn::Linear(128, 10))) {}
  at::Tensor forward(at::Tensor x) override {
    x = F::max_pool2d(F::relu(bn1_->forward(conv1_->forward(x))), F::MaxPool2dFuncOptions(2));
    x = F::max_pool2d(F::relu(conv2_->forward(x)), F::MaxPool2dFuncOptions(2));
    return fc2_->forward(F::relu(fc1_->forward(x.flatten(1))));
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};

}  // namespace

std::shared_ptr<Classifier> make_classifier(const std::string& name) {
  if (name == "mlp") return std::make_shared<Mlp>();
  if (name == "cnn") return std::make_shared<Cnn>();
  WINNOW_THROW("unknown model '{}'; choose mlp or cnn", name);
}

}  // namespace winnow::examples
