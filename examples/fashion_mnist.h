// Fashion-MNIST (Zalando; 60k train / 10k test, 28x28 grey, 10 classes) read
// from the IDX files Debian's dataset-fashion-mnist package installs, gzipped
// or not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace winnow::examples {

struct LabelledImages {
  at::Tensor images;  // [N, 1, 28, 28] float32, standardised
  at::Tensor labels;  // [N] int64 in [0, 10)
};

enum class Split { Train, Test };

// Directory from $WINNOW_FASHION_MNIST_DIR, else Debian's install location.
std::string default_fashion_mnist_dir();

// Loads one split; `limit` > 0 keeps only the first `limit` samples. Throws
// winnow::Error naming the file on a missing, truncated or malformed file
// (the IDX parsing is winnow::dataset's reader).
LabelledImages load_fashion_mnist(const std::string& dir, Split split, std::int64_t limit = 0);

// Label noise for experiments: gives round(fraction * N) samples, drawn with
// `seed`, a label chosen uniformly among the 9 other classes. Returns their
// ids (sorted).
std::vector<std::int64_t> flip_labels(LabelledImages& data, double fraction, std::uint64_t seed);

}  // namespace winnow::examples
