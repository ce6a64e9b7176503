// Shared fixtures for the curation tests: a scratch directory, the
// Fashion-MNIST test files and image edits.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation::test {

inline const std::string kFashionTestImages =
    "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
inline const std::string kFashionTestLabels =
    "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

// The Fashion-MNIST test set as records, loaded once.
inline const std::vector<ManifestRecord>& fashion_test() {
  static const std::vector<ManifestRecord> records =
      readers::import_idx(kFashionTestImages, kFashionTestLabels, "test");
  return records;
}

// A fresh directory under /tmp, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ =
        std::filesystem::temp_directory_path() /
        ("winnow-curation-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream f(file(name), std::ios::binary);
    f << bytes;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// A re-submitted copy: shifted by (dx, dy), brightness scaled by `factor`,
// Gaussian noise of `sigma`, rounded and clipped.
inline ManifestRecord edited_copy(const ManifestRecord& src, int dx, int dy, double factor,
                                  double sigma, unsigned seed) {
  ManifestRecord out = src;
  out.key = "copy-of-" + src.key;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  const auto w = static_cast<long>(src.width);
  const auto h = static_cast<long>(src.height);
  for (long y = 0; y < h; ++y) {
    for (long x = 0; x < w; ++x) {
      const long sx = x - dx;
      const long sy = y - dy;
      double v = (sx >= 0 && sy >= 0 && sx < w && sy < h)
                     ? src.pixels[static_cast<std::size_t>(sy * w + sx)]
                     : 0.0;
      v = v * factor + (sigma > 0 ? noise(rng) : 0.0);
      out.pixels[static_cast<std::size_t>(y * w + x)] =
          static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
    }
  }
  return out;
}

}  // namespace winnow::curation::test
