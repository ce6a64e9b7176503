#include "winnow/image/image_resize.h"

#include <algorithm>
#include <cmath>

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

}  // namespace

std::vector<Image> resize_area(const Image& image, const std::vector<ImageSize>& sizes) {
  for (const ImageSize& size : sizes) {
    WINNOW_THROW_IF_NOT(size.width > 0 && size.height > 0 && image.width > 0 && image.height > 0,
                        "resize_area: cannot resize {} x {} to {} x {}", image.width, image.height,
                        size.width, size.height);
  }
  // Per target size: its weights, its sums and its next unfinished row.
  struct Target {
    AxisWeights cols, rows;
    std::vector<float> out, row;
    std::size_t next_row = 0;
  };
  std::vector<Target> targets;
  for (const ImageSize& size : sizes) {
    Target t{axis_weights(image.width, size.width), axis_weights(image.height, size.height),
             std::vector<float>(size.width * size.height * 3, 0.0f),
             std::vector<float>(size.width * 3)};
    targets.push_back(std::move(t));
  }
  // Each source row is converted once, resampled horizontally once per target
  // size, then added to the target rows it overlaps: memory stays one source
  // row plus the targets.
  std::vector<float> source(image.width * 3);
  for (std::size_t y = 0; y < image.height; ++y) {
    const std::uint8_t* src = image.rgb.data() + y * image.width * 3;
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = src[i];
    for (std::size_t n = 0; n < targets.size(); ++n) {
      Target& target = targets[n];
      const std::size_t width = sizes[n].width, height = sizes[n].height;
      const AxisWeights& cols = target.cols;
      const AxisWeights& rows = target.rows;
      for (std::size_t t = 0; t < width; ++t) {
        float acc[3] = {0.0f, 0.0f, 0.0f};
        for (std::size_t k = cols.offset[t], s = cols.first[t]; k < cols.offset[t + 1]; ++k, ++s) {
          for (int c = 0; c < 3; ++c) acc[c] += cols.weights[k] * source[3 * s + c];
        }
        for (int c = 0; c < 3; ++c) target.row[3 * t + c] = acc[c];
      }
      while (target.next_row < height &&
             rows.first[target.next_row] +
                     (rows.offset[target.next_row + 1] - rows.offset[target.next_row]) <=
                 y) {
        ++target.next_row;  // rows wholly above y are complete
      }
      for (std::size_t t = target.next_row; t < height && rows.first[t] <= y; ++t) {
        const std::size_t k = rows.offset[t] + (y - rows.first[t]);
        if (k >= rows.offset[t + 1]) continue;
        const float w = rows.weights[k];
        float* dst = target.out.data() + t * width * 3;
        for (std::size_t i = 0; i < width * 3; ++i) dst[i] += w * target.row[i];
      }
    }
  }
  std::vector<Image> results;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const std::vector<float>& out = targets[n].out;
    Image result;
    result.width = sizes[n].width;
    result.height = sizes[n].height;
    result.rgb.resize(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      result.rgb[i] = static_cast<std::uint8_t>(std::clamp(std::lround(out[i]), 0L, 255L));
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
  for (std::size_t i = 0; i < grey.size(); ++i) {
    const std::uint8_t* p = image.rgb.data() + 3 * i;
    grey[i] = static_cast<std::uint8_t>((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
  }
  return grey;
}

std::vector<std::uint8_t> grey_thumbnail(const Image& image, std::size_t width,
                                         std::size_t height) {
  return grey_levels(resize_area(image, width, height));
}

}  // namespace winnow::image
