#include "winnow/image/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "winnow/error.h"

namespace winnow::image {

namespace {

// Which source pixels (and with what weight) make up each target pixel along
// one axis: target pixel t covers source [t * n / m, (t + 1) * n / m).
struct AxisWeights {
  std::vector<std::size_t> first;   // per target pixel: first source index
  std::vector<std::size_t> offset;  // per target pixel: start in weights
  std::vector<float> weights;       // normalised to sum 1 per target pixel
};

AxisWeights axis_weights(std::size_t source, std::size_t target) {
  AxisWeights w;
  const double scale = static_cast<double>(source) / static_cast<double>(target);
  for (std::size_t t = 0; t < target; ++t) {
    const double begin = t * scale;
    const double end = (t + 1) * scale;
    const auto lo = static_cast<std::size_t>(std::floor(begin));
    const auto hi = std::min(source, static_cast<std::size_t>(std::ceil(end)));
    w.first.push_back(lo);
    w.offset.push_back(w.weights.size());
    for (std::size_t s = lo; s < hi; ++s) {
      const double covered = std::min(end, s + 1.0) - std::max(begin, double(s));
      w.weights.push_back(static_cast<float>(covered / scale));
    }
  }
  w.offset.push_back(w.weights.size());
  return w;
}

// The two long loops of resize_area, also compiled for AVX2 and chosen when
// the CPU has it (GCC's target_clones: an ifunc resolved at load time). The
// same products and sums in the same order either way (no fused
// multiply-add), so the result does not depend on the CPU.
__attribute__((target_clones("avx2", "default"))) void to_float(const std::uint8_t* in, float* out,
                                                                std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
}

__attribute__((target_clones("avx2", "default"))) void add_scaled(float* sum, const float* row,
                                                                  float w, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) sum[i] += w * row[i];
}

}  // namespace

std::vector<Image> resize_area(const Image& image, const std::vector<ImageSize>& sizes) {
  for (const ImageSize& size : sizes) {
    WINNOW_THROW_IF_NOT(size.width > 0 && size.height > 0 && image.width > 0 && image.height > 0,
                        "resize_area: cannot resize {} x {} to {} x {}", image.width, image.height,
                        size.width, size.height);
  }
  // Rows first: each source row, converted to float once, is added with its
  // weight into the full-width sums of the target rows it overlaps (long
  // contiguous loops that vectorise); then each target row's sum is averaged
  // across, once per target row rather than once per source row.
  const std::size_t line = image.width * 3;
  struct Target {
    AxisWeights cols, rows;
    std::vector<float> sums;  // height x line: each target row summed down
  };
  std::vector<Target> targets;
  for (const ImageSize& size : sizes) {
    targets.push_back(Target{axis_weights(image.width, size.width),
                             axis_weights(image.height, size.height),
                             std::vector<float>(size.height * line, 0.0f)});
  }
  std::vector<float> source(line);
  for (std::size_t y = 0; y < image.height; ++y) {
    const float* row = source.data();
    to_float(image.rgb.data() + y * line, source.data(), line);
    for (std::size_t n = 0; n < targets.size(); ++n) {
      const AxisWeights& rows = targets[n].rows;
      const std::size_t height = sizes[n].height;
      // The target rows covering source row y: those from the last whose
      // first source row is at or before y, back while they still reach y.
      auto t = static_cast<std::size_t>(
          std::upper_bound(rows.first.begin(), rows.first.begin() + height, y) -
          rows.first.begin());
      while (t > 0) {
        --t;
        const std::size_t k = rows.offset[t] + (y - rows.first[t]);
        if (k >= rows.offset[t + 1]) break;  // row t ends above y, and so do those before it
        const float w = rows.weights[k];
        add_scaled(targets[n].sums.data() + t * line, row, w, line);
      }
    }
  }
  std::vector<Image> results;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const AxisWeights& cols = targets[n].cols;
    const std::size_t width = sizes[n].width, height = sizes[n].height;
    Image result;
    result.width = width;
    result.height = height;
    result.rgb.resize(width * height * 3);
    for (std::size_t t = 0; t < height; ++t) {
      const float* sum = targets[n].sums.data() + t * line;
      std::uint8_t* dst = result.rgb.data() + t * width * 3;
      for (std::size_t x = 0; x < width; ++x) {
        float acc[3] = {0.0f, 0.0f, 0.0f};
        for (std::size_t k = cols.offset[x], s = cols.first[x]; k < cols.offset[x + 1]; ++k, ++s) {
          for (std::size_t c = 0; c < 3; ++c) acc[c] += cols.weights[k] * sum[3 * s + c];
        }
        for (std::size_t c = 0; c < 3; ++c) {
          dst[3 * x + c] = static_cast<std::uint8_t>(std::clamp(std::lround(acc[c]), 0L, 255L));
        }
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

Image resize_area(const Image& image, std::size_t width, std::size_t height) {
  return std::move(resize_area(image, {ImageSize{width, height}}).front());
}

std::vector<std::uint8_t> grey_levels(const Image& image) {
  std::vector<std::uint8_t> grey(image.width * image.height);
  for (std::size_t i = 0; i < grey.size(); ++i) grey[i] = luma(image.rgb.data() + 3 * i);
  return grey;
}

std::vector<std::uint8_t> grey_thumbnail(const Image& image, std::size_t width,
                                         std::size_t height) {
  return grey_levels(resize_area(image, width, height));
}

}  // namespace winnow::image
