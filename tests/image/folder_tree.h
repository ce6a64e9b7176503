// Folder trees of image files for the import-folder tests: distinct synthetic
// pictures (smooth random waves per colour channel) written as JPEG files.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "image_test_files.h"
#include "winnow/image/image.h"

namespace winnow::image::test {

// A 64 x 48 picture unlike that of any other seed: per channel, the sum of
// three waves of random direction, frequency and phase.
inline Image wave_picture(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> freq(0.05, 0.4), phase(0.0, 6.283), dir(-1.0, 1.0);
  Image image;
  image.width = 64;
  image.height = 48;
  image.rgb.resize(image.width * image.height * 3);
  for (int c = 0; c < 3; ++c) {
    double fx[3], fy[3], ph[3];
    for (int w = 0; w < 3; ++w) {
      const double f = freq(rng);
      fx[w] = f * dir(rng);
      fy[w] = f * dir(rng);
      ph[w] = phase(rng);
    }
    for (std::size_t y = 0; y < image.height; ++y) {
      for (std::size_t x = 0; x < image.width; ++x) {
        double v = 0.0;
        for (int w = 0; w < 3; ++w) v += std::sin(fx[w] * x + fy[w] * y + ph[w]);
        image.rgb[(y * image.width + x) * 3 + c] = static_cast<std::uint8_t>(127.5 + 42.0 * v);
      }
    }
  }
  return image;
}

// Writes wave_picture(seed) as a JPEG at root/relative (folders created).
inline void write_picture(const std::filesystem::path& root, const std::string& relative,
                          unsigned seed) {
  const std::filesystem::path path = root / relative;
  std::filesystem::create_directories(path.parent_path());
  write_bytes(path.string(), encode_jpeg(wave_picture(seed), 90));
}

}  // namespace winnow::image::test
