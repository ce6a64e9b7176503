// Shared helpers for the curation benchmarks: the Fashion-MNIST paths, plus
// bench/bench_support.h (timing, JSON output).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"

namespace winnow::curation::bench {

inline const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

// Timing, medians and JSON output are shared with every winnow benchmark.
using namespace winnow::bench;

// The first n labels of `truth` with round(noise * n) of them, picked by a
// shuffle seeded with `seed`, moved to a uniformly random other class.
// bench_label_quality and bench_confident_learning flip the same labels.
struct FlippedLabels {
  std::vector<int> labels;
  std::vector<bool> flipped;
  std::size_t count = 0;  // labels flipped
};

inline FlippedLabels flip_labels(const std::vector<std::uint8_t>& truth, std::size_t n,
                                 double noise, unsigned seed, int classes) {
  std::mt19937_64 rng(seed);
  FlippedLabels out{std::vector<int>(truth.begin(), truth.begin() + static_cast<long>(n)),
                    std::vector<bool>(n, false), 0};
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  out.count = static_cast<std::size_t>(noise * static_cast<double>(n));
  std::uniform_int_distribution<int> other(1, classes - 1);
  for (std::size_t f = 0; f < out.count; ++f) {
    const std::size_t i = perm[f];
    out.labels[i] = (out.labels[i] + other(rng)) % classes;
    out.flipped[i] = true;
  }
  return out;
}

// The first n images embedded with `embedder`, row-major n x dim.
inline std::vector<float> embed_images(const dataset::IdxImages& imgs, std::size_t n,
                                       const embed::Embedder& embedder) {
  const std::size_t d = embedder.dim();
  std::vector<float> vecs(n * d);
  ManifestRecord rec;
  rec.kind = ContentKind::pixels;
  rec.width = imgs.cols;
  rec.height = imgs.rows;
  for (std::size_t i = 0; i < n; ++i) {
    rec.key = std::to_string(i);
    rec.pixels.assign(imgs.image(i), imgs.image(i) + imgs.image_size());
    embedder.embed(rec, vecs.data() + i * d);
  }
  return vecs;
}

// The label-noise benchmarks' data: the first `limit` (0: all) IDX images
// and their true labels, the flipped labels (flip_labels) and the images
// embedded with `embedder_spec`. bench_label_quality and
// bench_confident_learning judge the same flips in the same embedding.
struct NoisyEmbeddedImages {
  dataset::IdxImages images;
  std::vector<std::uint8_t> truth;
  std::size_t n = 0;
  FlippedLabels flip;
  std::unique_ptr<embed::Embedder> embedder;
  std::vector<float> vectors;  // n x embedder->dim()
  double embed_seconds = 0.0;
};

inline NoisyEmbeddedImages load_noisy_embedded(const std::string& images_path,
                                               const std::string& labels_path, std::size_t limit,
                                               double noise, unsigned seed, int classes,
                                               const std::string& embedder_spec) {
  NoisyEmbeddedImages out;
  out.images = dataset::read_idx_images(images_path);
  out.truth = dataset::read_idx_labels(labels_path);
  out.n = limit > 0 ? std::min(limit, out.images.count) : out.images.count;
  out.flip = flip_labels(out.truth, out.n, noise, seed, classes);
  embed::EmbedderOptions eopt;
  eopt.width = out.images.cols;
  eopt.height = out.images.rows;
  out.embedder = embed::make_embedder(embedder_spec, eopt);
  const auto start = Clock::now();
  out.vectors = embed_images(out.images, out.n, *out.embedder);
  out.embed_seconds = seconds_since(start);
  return out;
}

}  // namespace winnow::curation::bench
