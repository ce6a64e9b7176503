#include "fashion_mnist.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <ATen/CPUGeneratorImpl.h>

#include "winnow/dataset/idx_reader.h"
#include "winnow/error.h"

namespace winnow::examples {
namespace {

std::string find_file(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem, stem + ".gz"}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (std::filesystem::exists(path)) return path;
  }
  WINNOW_THROW(
      "Fashion-MNIST file '{}' (or '{}.gz') not found in '{}'; install Debian's "
      "dataset-fashion-mnist (scripts/install-deps) or set WINNOW_FASHION_MNIST_DIR",
      stem, stem, dir);
}

// The IDX files are parsed by winnow::dataset (gzipped or plain, every header
// and size checked); here they only become tensors.
at::Tensor images_tensor(const std::string& path) {
  const dataset::IdxImages idx = dataset::read_idx_images(path);
  at::Tensor images =
      at::empty({static_cast<std::int64_t>(idx.count), static_cast<std::int64_t>(idx.rows),
                 static_cast<std::int64_t>(idx.cols)},
                at::kByte);
  std::memcpy(images.data_ptr<std::uint8_t>(), idx.pixels.data(), idx.pixels.size());
  return images;
}

at::Tensor labels_tensor(const std::string& path) {
  const std::vector<std::uint8_t> labels = dataset::read_idx_labels(path);
  at::Tensor tensor = at::empty({static_cast<std::int64_t>(labels.size())}, at::kByte);
  std::memcpy(tensor.data_ptr<std::uint8_t>(), labels.data(), labels.size());
  return tensor;
}

}  // namespace

std::string default_fashion_mnist_dir() {
  const char* env = std::getenv("WINNOW_FASHION_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : WINNOW_DEFAULT_FASHION_MNIST_DIR;
}

LabelledImages load_fashion_mnist(const std::string& dir, Split split, std::int64_t limit) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  at::Tensor images = images_tensor(find_file(dir, prefix + "-images-idx3-ubyte"));
  at::Tensor labels = labels_tensor(find_file(dir, prefix + "-labels-idx1-ubyte"));
  WINNOW_THROW_IF_NOT(images.size(0) == labels.size(0),
                      "Fashion-MNIST {} split in '{}': {} images but {} labels", prefix, dir,
                      images.size(0), labels.size(0));
  if (limit > 0 && limit < images.size(0)) {
    images = images.narrow(0, 0, limit);
    labels = labels.narrow(0, 0, limit);
  }
  // Standardise with the training set's pixel mean and standard deviation.
  constexpr double kMean = 0.2860;
  constexpr double kStd = 0.3530;
  at::Tensor x = images.to(at::kFloat).div_(255.0).sub_(kMean).div_(kStd).unsqueeze(1);
  return LabelledImages{x.contiguous(), labels.to(at::kLong)};
}

std::vector<std::int64_t> flip_labels(LabelledImages& data, double fraction, std::uint64_t seed) {
  WINNOW_THROW_IF_NOT(fraction >= 0.0 && fraction <= 1.0,
                      "flip_labels: the fraction must be in [0, 1], got {}", fraction);
  const std::int64_t n = data.labels.size(0);
  const auto count = static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(n)));
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor ids = std::get<0>(at::randperm(n, gen, at::kLong).narrow(0, 0, count).sort());
  at::Tensor shift = at::randint(1, 10, {count}, gen, at::kLong);
  at::Tensor labels = data.labels.index_select(0, ids);
  data.labels.index_put_({ids}, (labels + shift).remainder(10));
  return std::vector<std::int64_t>(ids.data_ptr<std::int64_t>(),
                                   ids.data_ptr<std::int64_t>() + count);
}

}  // namespace winnow::examples
