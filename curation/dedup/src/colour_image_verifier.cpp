#include "winnow/curation/dedup/colour_image_verifier.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::curation::dedup {
namespace {

// One image as three float planes of side x side, channel after channel.
using Planes = std::vector<float>;

Planes to_planes(const std::vector<std::uint8_t>& rgb, std::size_t side) {
  const std::size_t n = side * side;
  Planes planes(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < 3; ++c) planes[c * n + i] = rgb[3 * i + c];
  }
  return planes;
}

// Separable Gaussian blur, edges clamped.
Planes blurred(const Planes& in, std::size_t side, double sigma) {
  if (sigma <= 0.0) return in;
  const int radius = static_cast<int>(std::ceil(3.0 * sigma));
  std::vector<float> kernel(2 * radius + 1);
  double sum = 0.0;
  for (int k = -radius; k <= radius; ++k) {
    kernel[k + radius] = static_cast<float>(std::exp(-0.5 * (k / sigma) * (k / sigma)));
    sum += kernel[k + radius];
  }
  for (float& k : kernel) k = static_cast<float>(k / sum);
  const int s = static_cast<int>(side);
  auto clamp = [s](int v) { return std::clamp(v, 0, s - 1); };
  Planes tmp(in.size()), out(in.size());
  const std::size_t n = side * side;
  for (std::size_t c = 0; c < 3; ++c) {
    const float* src = in.data() + c * n;
    float* mid = tmp.data() + c * n;
    float* dst = out.data() + c * n;
    for (int y = 0; y < s; ++y) {
      for (int x = 0; x < s; ++x) {
        float v = 0.0f;
        for (int k = -radius; k <= radius; ++k) v += kernel[k + radius] * src[y * s + clamp(x + k)];
        mid[y * s + x] = v;
      }
    }
    for (int y = 0; y < s; ++y) {
      for (int x = 0; x < s; ++x) {
        float v = 0.0f;
        for (int k = -radius; k <= radius; ++k) v += kernel[k + radius] * mid[clamp(y + k) * s + x];
        dst[y * s + x] = v;
      }
    }
  }
  return out;
}

// The centre of `in` magnified by `zoom` (> 1) back to side x side, bilinear.
Planes zoomed(const Planes& in, std::size_t side, double zoom) {
  const std::size_t n = side * side;
  const double centre = static_cast<double>(side) / 2.0;
  const double last = static_cast<double>(side) - 1.0;
  Planes out(in.size());
  for (std::size_t y = 0; y < side; ++y) {
    const double sy =
        std::clamp(centre + (static_cast<double>(y) + 0.5 - centre) / zoom - 0.5, 0.0, last);
    const auto y0 = static_cast<std::size_t>(sy);
    const std::size_t y1 = std::min(y0 + 1, side - 1);
    const double fy = sy - static_cast<double>(y0);
    for (std::size_t x = 0; x < side; ++x) {
      const double sx =
          std::clamp(centre + (static_cast<double>(x) + 0.5 - centre) / zoom - 0.5, 0.0, last);
      const auto x0 = static_cast<std::size_t>(sx);
      const std::size_t x1 = std::min(x0 + 1, side - 1);
      const double fx = sx - static_cast<double>(x0);
      for (std::size_t c = 0; c < 3; ++c) {
        const float* p = in.data() + c * n;
        const double top = p[y0 * side + x0] * (1 - fx) + p[y0 * side + x1] * fx;
        const double bottom = p[y1 * side + x0] * (1 - fx) + p[y1 * side + x1] * fx;
        out[c * n + y * side + x] = static_cast<float>(top * (1 - fy) + bottom * fy);
      }
    }
  }
  return out;
}

// Pearson correlation of the overlap of a and b shifted by (dx, dy), all
// three channels together. Two constant overlaps: 1 when equal, else 0.
double shifted_pearson(const Planes& a, const Planes& b, std::size_t side, int dx, int dy) {
  const int s = static_cast<int>(side);
  const std::size_t n = side * side;
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  std::size_t count = 0;
  for (std::size_t c = 0; c < 3; ++c) {
    for (int y = std::max(0, dy); y < s + std::min(0, dy); ++y) {
      const float* pa = a.data() + c * n + static_cast<std::size_t>(y * s);
      const float* pb = b.data() + c * n + static_cast<std::size_t>((y - dy) * s);
      for (int x = std::max(0, dx); x < s + std::min(0, dx); ++x) {
        const double va = pa[x];
        const double vb = pb[x - dx];
        sa += va;
        sb += vb;
        saa += va * va;
        sbb += vb * vb;
        sab += va * vb;
        ++count;
      }
    }
  }
  if (count == 0) return 0.0;
  const double m = static_cast<double>(count);
  const double cov = sab - sa * sb / m;
  const double va = saa - sa * sa / m;
  const double vb = sbb - sb * sb / m;
  constexpr double kFlat = 1e-6;  // variance of a constant image, up to rounding
  if (va <= kFlat * m || vb <= kFlat * m) {
    return (va <= kFlat * m && vb <= kFlat * m && std::abs(sa - sb) <= 0.5 * m) ? 1.0 : 0.0;
  }
  return cov / std::sqrt(va * vb);
}

double best_over_shifts(const Planes& a, const Planes& b, std::size_t side, int max_shift) {
  double best = -1.0;
  for (int dy = -max_shift; dy <= max_shift; ++dy) {
    for (int dx = -max_shift; dx <= max_shift; ++dx) {
      best = std::max(best, shifted_pearson(a, b, side, dx, dy));
    }
  }
  return best;
}

}  // namespace

ColourImageNearDuplicateVerifier::ColourImageNearDuplicateVerifier(
    ColourImageVerifierOptions options, ImageVerifierOptions grey_options)
    : options_(options), grey_(grey_options) {
  WINNOW_THROW_IF_NOT(options_.side >= 4 && options_.side <= 256,
                      "colour image verifier: side={} must be in [4, 256]", options_.side);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.blur_sigma) && options_.blur_sigma >= 0.0 &&
                          options_.blur_sigma <= 8.0,
                      "colour image verifier: blur_sigma={} must be in [0, 8]",
                      options_.blur_sigma);
  WINNOW_THROW_IF_NOT(options_.max_shift >= 0 && options_.max_shift <= 8,
                      "colour image verifier: max_shift={} must be in [0, 8]", options_.max_shift);
  WINNOW_THROW_IF_NOT(
      std::isfinite(options_.max_zoom) && options_.max_zoom >= 1.0 && options_.max_zoom <= 2.0,
      "colour image verifier: max_zoom={} must be in [1, 2]", options_.max_zoom);
  WINNOW_THROW_IF_NOT(options_.zoom_steps >= 0 && options_.zoom_steps <= 16,
                      "colour image verifier: zoom_steps={} must be in [0, 16]",
                      options_.zoom_steps);
  WINNOW_THROW_IF_NOT(
      std::isfinite(options_.threshold) && options_.threshold >= -1.0 && options_.threshold <= 1.0,
      "colour image verifier: threshold={} must be in [-1, 1]", options_.threshold);
  if (options_.max_zoom > 1.0) {
    for (int step = 1; step <= options_.zoom_steps; ++step) {
      zooms_.push_back(1.0 + (options_.max_zoom - 1.0) * step / options_.zoom_steps);
    }
  }
}

std::string ColourImageNearDuplicateVerifier::name() const {
  return fmt::format("image-colour(side={},blur={},max_shift={},max_zoom={}) else {}",
                     options_.side, options_.blur_sigma, options_.max_shift, options_.max_zoom,
                     grey_.name());
}

bool ColourImageNearDuplicateVerifier::both_in_colour(const ManifestRecord& a,
                                                      const ManifestRecord& b) const {
  const std::size_t bytes = options_.side * options_.side * 3;
  return a.colour.size() == bytes && b.colour.size() == bytes;
}

double ColourImageNearDuplicateVerifier::threshold_for(const ManifestRecord& a,
                                                       const ManifestRecord& b) const {
  return both_in_colour(a, b) ? options_.threshold : grey_.threshold();
}

double ColourImageNearDuplicateVerifier::similarity(const ManifestRecord& a,
                                                    const ManifestRecord& b) const {
  if (!both_in_colour(a, b)) return grey_.similarity(a, b);
  return colour_similarity(a.colour, b.colour);
}

double ColourImageNearDuplicateVerifier::colour_similarity(
    const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) const {
  const std::size_t side = options_.side;
  WINNOW_THROW_IF_NOT(a.size() == side * side * 3 && b.size() == side * side * 3,
                      "colour image verifier: images must be {}x{} RGB ({} bytes), got {} and {}",
                      side, side, side * side * 3, a.size(), b.size());
  const Planes pa = blurred(to_planes(a, side), side, options_.blur_sigma);
  const Planes pb = blurred(to_planes(b, side), side, options_.blur_sigma);
  double best = best_over_shifts(pa, pb, side, options_.max_shift);
  // Zooms only when the plain comparison fails: a re-encoded or resized copy
  // stops here, and the similarity reported is then the unzoomed one.
  for (const double zoom : zooms_) {
    if (best >= options_.threshold) break;
    best = std::max(best, best_over_shifts(zoomed(pa, side, zoom), pb, side, options_.max_shift));
    best = std::max(best, best_over_shifts(pa, zoomed(pb, side, zoom), side, options_.max_shift));
  }
  return best;
}

}  // namespace winnow::curation::dedup
