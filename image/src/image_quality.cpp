#include "winnow/image/image_quality.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace winnow::image {

namespace {

using Histogram = std::array<std::size_t, 256>;

// The smallest level with at least `share` of the counts at or below it.
int percentile(const Histogram& histogram, std::size_t total, double share) {
  const double wanted = share * static_cast<double>(total);
  std::size_t seen = 0;
  for (int level = 0; level < 256; ++level) {
    seen += histogram[static_cast<std::size_t>(level)];
    if (static_cast<double>(seen) >= wanted && seen > 0) return level;
  }
  return 255;
}

// Laplacian energy over gradient energy, over 8 (see ImageQualityScores::blurry).
double sharpness(const std::vector<float>& grey, std::size_t width, std::size_t height) {
  double gradient = 0.0;
  double laplacian = 0.0;
  for (std::size_t y = 0; y < height; ++y) {
    const float* row = grey.data() + y * width;
    const float* below = y + 1 < height ? row + width : nullptr;
    const float* above = y > 0 ? row - width : nullptr;
    for (std::size_t x = 0; x < width; ++x) {
      if (x + 1 < width) gradient += double(row[x + 1] - row[x]) * (row[x + 1] - row[x]);
      if (below != nullptr) gradient += double(below[x] - row[x]) * (below[x] - row[x]);
      if (x == 0 || x + 1 == width || above == nullptr || below == nullptr) continue;
      const double l = double(row[x - 1]) + row[x + 1] + above[x] + below[x] - 4.0 * row[x];
      laplacian += l * l;
    }
  }
  if (gradient <= 0.0 || width < 3 || height < 3) return 1.0;
  return std::min(1.0, laplacian / gradient / 8.0);
}

// `image` with every f x f block averaged (the blocks of the last row and
// column may be partial): rows are summed into one line of full width, which
// is then summed across. Cheap, and an area average of whole blocks is the
// area average of the image.
Image binned(const Image& image, std::size_t f) {
  Image out;
  out.width = (image.width + f - 1) / f;
  out.height = (image.height + f - 1) / f;
  out.rgb.resize(out.width * out.height * 3);
  const std::size_t line_size = image.width * 3;
  std::vector<std::uint32_t> line(line_size);
  for (std::size_t by = 0; by < out.height; ++by) {
    std::fill(line.begin(), line.end(), 0u);
    const std::size_t y_end = std::min(image.height, (by + 1) * f);
    for (std::size_t y = by * f; y < y_end; ++y) {
      const std::uint8_t* row = image.rgb.data() + y * line_size;
      for (std::size_t i = 0; i < line_size; ++i) line[i] += row[i];
    }
    const auto rows = static_cast<std::uint32_t>(y_end - by * f);
    std::uint8_t* dst = out.rgb.data() + by * out.width * 3;
    // Every block of the row but perhaps the last has rows * f pixels: the
    // rounded division by it is a multiplication by its inverse, corrected
    // to the exact quotient (an integer division per byte cost more than the
    // rest of the binning).
    std::uint32_t n = 0;
    double inverse = 0.0;
    for (std::size_t bx = 0; bx < out.width; ++bx) {
      const std::size_t x_end = std::min(image.width, (bx + 1) * f);
      const auto pixels = rows * static_cast<std::uint32_t>(x_end - bx * f);
      if (pixels != n) {
        n = pixels;
        inverse = 1.0 / n;
      }
      for (std::size_t c = 0; c < 3; ++c) {
        std::uint32_t sum = 0;
        for (std::size_t x = bx * f; x < x_end; ++x) sum += line[3 * x + c];
        const std::uint32_t rounded = sum + n / 2;
        auto q = static_cast<std::uint32_t>(rounded * inverse);
        if (q * n > rounded) --q;
        if ((q + 1) * n <= rounded) ++q;
        dst[3 * bx + c] = static_cast<std::uint8_t>(q);
      }
    }
  }
  return out;
}

// Area averaging along one axis from `source` to `target` pixels, target <=
// source < 2 * target: each target pixel covers at most three source pixels
// (a tap past the end has weight 0 and repeats the last pixel, so the loops
// have no branches).
struct Taps {
  std::vector<std::array<std::size_t, 3>> index;  // per target pixel
  std::vector<std::array<float, 3>> weight;

  Taps(std::size_t source, std::size_t target) : index(target), weight(target) {
    const double scale = static_cast<double>(source) / static_cast<double>(target);
    for (std::size_t t = 0; t < target; ++t) {
      const double begin = t * scale, end = (t + 1) * scale;
      const auto first = static_cast<std::size_t>(begin);
      for (std::size_t k = 0; k < 3; ++k) {
        const double lo = std::max(begin, double(first + k));
        const double hi = std::min(end, double(first + k + 1));
        index[t][k] = std::min(first + k, source - 1);
        weight[t][k] = first + k < source && hi > lo ? static_cast<float>((hi - lo) / scale) : 0.0f;
      }
    }
  }
};

// `image` (less than twice the size asked for) area-averaged to width x height.
Image resampled(const Image& image, std::size_t width, std::size_t height) {
  const Taps across(image.width, width), down(image.height, height);
  std::vector<float> rows(image.height * width * 3);  // resampled across, per source row
  for (std::size_t y = 0; y < image.height; ++y) {
    const std::uint8_t* src = image.rgb.data() + y * image.width * 3;
    float* dst = rows.data() + y * width * 3;
    for (std::size_t t = 0; t < width; ++t) {
      const auto& i = across.index[t];
      const auto& w = across.weight[t];
      for (std::size_t c = 0; c < 3; ++c) {
        dst[3 * t + c] =
            w[0] * src[3 * i[0] + c] + w[1] * src[3 * i[1] + c] + w[2] * src[3 * i[2] + c];
      }
    }
  }
  Image out;
  out.width = width;
  out.height = height;
  out.rgb.resize(width * height * 3);
  const std::size_t line = width * 3;
  for (std::size_t t = 0; t < height; ++t) {
    const float* r0 = rows.data() + down.index[t][0] * line;
    const float* r1 = rows.data() + down.index[t][1] * line;
    const float* r2 = rows.data() + down.index[t][2] * line;
    const auto& w = down.weight[t];
    std::uint8_t* dst = out.rgb.data() + t * line;
    for (std::size_t i = 0; i < line; ++i) {
      const float v = w[0] * r0[i] + w[1] * r1[i] + w[2] * r2[i];
      dst[i] = static_cast<std::uint8_t>(std::min(255.0f, v + 0.5f));
    }
  }
  return out;
}

// The analysis image: kQualityAnalysisSide on the longer side, the aspect
// ratio kept; whole blocks binned first (down to less than twice the size),
// then area-averaged to the exact size.
Image analysis_image(const Image& image) {
  const std::size_t longer = std::max(image.width, image.height);
  const auto side = [&](std::size_t n) {
    return std::max<std::size_t>(1, (n * kQualityAnalysisSide + longer / 2) / longer);
  };
  const std::size_t f = longer / kQualityAnalysisSide;
  const Image small = f >= 2 ? binned(image, f) : Image{};
  return resampled(f >= 2 ? small : image, side(image.width), side(image.height));
}

}  // namespace

ImageQualityScores measure_image_quality(const Image& image) {
  ImageQualityScores scores;
  if (image.width == 0 || image.height == 0) return scores;

  // Tones and colour from the decoded pixels themselves: a one-pixel black
  // outline is grey at 64 px, and line art would read as washed out.
  std::size_t stride = 1;
  while ((image.width / stride) * (image.height / stride) > kQualityToneSamples) ++stride;
  // Four histograms of each kind, one per sample position modulo 4, summed
  // at the end: runs of one level (a white background) would otherwise
  // make every count wait for the one before it.
  constexpr std::size_t kWays = 4;
  std::array<std::array<std::uint32_t, 256>, kWays> luma_ways{};
  std::array<std::array<std::uint32_t, 256>, kWays> spread_ways{};
  std::size_t n = 0;
  for (std::size_t y = 0; y < image.height; y += stride) {
    const std::uint8_t* row = image.rgb.data() + y * image.width * 3;
    for (std::size_t x = 0; x < image.width; x += stride, ++n) {
      const std::uint8_t* p = row + 3 * x;
      const std::size_t way = n % kWays;
      ++luma_ways[way][luma(p)];
      ++spread_ways[way][static_cast<std::size_t>(std::max({p[0], p[1], p[2]}) -
                                                  std::min({p[0], p[1], p[2]}))];
    }
  }
  Histogram lumas{};
  Histogram spread{};
  for (std::size_t level = 0; level < 256; ++level) {
    for (std::size_t way = 0; way < kWays; ++way) {
      lumas[level] += luma_ways[way][level];
      spread[level] += spread_ways[way][level];
    }
  }
  scores.dark = percentile(lumas, n, 0.999) / 255.0;
  scores.bright = 1.0 - percentile(lumas, n, 0.001) / 255.0;
  scores.low_information = (percentile(lumas, n, 0.99) - percentile(lumas, n, 0.01)) / 255.0;
  scores.grayscale = percentile(spread, n, 0.99) / 255.0;

  // Sharpness on the analysis image, whose scale does not depend on the file's.
  Image resized;
  const Image* analysis = &image;
  if (std::max(image.width, image.height) > kQualityAnalysisSide) {
    resized = analysis_image(image);
    analysis = &resized;
  }
  std::vector<float> grey(analysis->width * analysis->height);
  for (std::size_t i = 0; i < grey.size(); ++i) {
    const std::uint8_t* p = analysis->rgb.data() + 3 * i;
    grey[i] = static_cast<float>(299u * p[0] + 587u * p[1] + 114u * p[2]) / 1000.0f;
  }
  scores.blurry = sharpness(grey, analysis->width, analysis->height);
  return scores;
}

}  // namespace winnow::image
