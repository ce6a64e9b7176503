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

Image resize_area(const Image& image, std::size_t width, std::size_t height) {
  WINNOW_THROW_IF_NOT(width > 0 && height > 0 && image.width > 0 && image.height > 0,
                      "resize_area: cannot resize {} x {} to {} x {}", image.width, image.height,
                      width, height);
  const AxisWeights cols = axis_weights(image.width, width);
  const AxisWeights rows = axis_weights(image.height, height);
  // Each source row is resampled horizontally once, then added to the target
  // rows it overlaps: memory stays one source row plus the target.
  std::vector<float> out(width * height * 3, 0.0f);
  std::vector<float> row(width * 3);
  std::size_t target_row = 0;
  for (std::size_t y = 0; y < image.height; ++y) {
    const std::uint8_t* src = image.rgb.data() + y * image.width * 3;
    for (std::size_t t = 0; t < width; ++t) {
      float acc[3] = {0.0f, 0.0f, 0.0f};
      for (std::size_t k = cols.offset[t], s = cols.first[t]; k < cols.offset[t + 1]; ++k, ++s) {
        for (int c = 0; c < 3; ++c) acc[c] += cols.weights[k] * src[3 * s + c];
      }
      for (int c = 0; c < 3; ++c) row[3 * t + c] = acc[c];
    }
    while (target_row < height &&
           rows.first[target_row] + (rows.offset[target_row + 1] - rows.offset[target_row]) <= y) {
      ++target_row;  // rows wholly above y are complete
    }
    for (std::size_t t = target_row; t < height && rows.first[t] <= y; ++t) {
      const std::size_t k = rows.offset[t] + (y - rows.first[t]);
      if (k >= rows.offset[t + 1]) continue;
      const float w = rows.weights[k];
      float* dst = out.data() + t * width * 3;
      for (std::size_t i = 0; i < width * 3; ++i) dst[i] += w * row[i];
    }
  }
  Image result;
  result.width = width;
  result.height = height;
  result.rgb.resize(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    result.rgb[i] = static_cast<std::uint8_t>(std::clamp(std::lround(out[i]), 0L, 255L));
  }
  return result;
}

std::vector<std::uint8_t> grey_thumbnail(const Image& image, std::size_t width,
                                         std::size_t height) {
  const Image small = resize_area(image, width, height);
  std::vector<std::uint8_t> grey(width * height);
  for (std::size_t i = 0; i < grey.size(); ++i) {
    const std::uint8_t* p = small.rgb.data() + 3 * i;
    grey[i] = static_cast<std::uint8_t>((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
  }
  return grey;
}

}  // namespace winnow::image
