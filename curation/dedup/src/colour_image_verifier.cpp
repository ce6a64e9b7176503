#include "winnow/curation/dedup/colour_image_verifier.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

// Header-only xxhash (as content_hash.cpp): no link dependency. GCC 12
// reports false -Warray-bounds positives inside its inlined update loop.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#define XXH_INLINE_ALL
#include <xxhash.h>
#pragma GCC diagnostic pop

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

// Separable Gaussian blur, edges clamped (each row and column padded with
// its edge values, so the inner loop has no branch and vectorises).
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
  const std::size_t n = side * side;
  const auto r = static_cast<std::size_t>(radius);
  std::vector<float> padded(side + 2 * r);
  // One line of `side` values, `stride` apart, blurred in place.
  auto blur_line = [&](float* line, std::size_t stride) {
    for (std::size_t i = 0; i < side; ++i) padded[r + i] = line[i * stride];
    for (std::size_t i = 0; i < r; ++i) {
      padded[i] = line[0];
      padded[r + side + i] = line[(side - 1) * stride];
    }
    for (std::size_t i = 0; i < side; ++i) {
      float v = 0.0f;
#pragma omp simd reduction(+ : v)
      for (std::size_t k = 0; k < kernel.size(); ++k) v += kernel[k] * padded[i + k];
      line[i * stride] = v;
    }
  };
  Planes out = in;
  for (std::size_t c = 0; c < 3; ++c) {
    float* plane = out.data() + c * n;
    for (std::size_t y = 0; y < side; ++y) blur_line(plane + y * side, 1);
    for (std::size_t x = 0; x < side; ++x) blur_line(plane + x, side);
  }
  return out;
}

// The centre of `in` magnified by `zoom` (> 1) back to side x side, bilinear.
Planes zoomed(const Planes& in, std::size_t side, double zoom) {
  // Where each output row (and, the image being square, column) samples the
  // input: the two neighbours and the weight of the second.
  const double centre = static_cast<double>(side) / 2.0;
  const double last = static_cast<double>(side) - 1.0;
  std::vector<std::size_t> lo(side), hi(side);
  std::vector<float> weight(side);
  for (std::size_t i = 0; i < side; ++i) {
    const double at =
        std::clamp(centre + (static_cast<double>(i) + 0.5 - centre) / zoom - 0.5, 0.0, last);
    lo[i] = static_cast<std::size_t>(at);
    hi[i] = std::min(lo[i] + 1, side - 1);
    weight[i] = static_cast<float>(at - static_cast<double>(lo[i]));
  }
  const std::size_t n = side * side;
  Planes out(in.size());
  for (std::size_t c = 0; c < 3; ++c) {
    const float* p = in.data() + c * n;
    float* q = out.data() + c * n;
    for (std::size_t y = 0; y < side; ++y) {
      const float* top = p + lo[y] * side;
      const float* bottom = p + hi[y] * side;
      const float fy = weight[y];
      for (std::size_t x = 0; x < side; ++x) {
        const float fx = weight[x];
        const float t = top[lo[x]] * (1 - fx) + top[hi[x]] * fx;
        const float b = bottom[lo[x]] * (1 - fx) + bottom[hi[x]] * fx;
        q[y * side + x] = t * (1 - fy) + b * fy;
      }
    }
  }
  return out;
}

// Pearson correlation from the sums over `count` pairs of values. Two
// constant images: 1 when equal, else 0.
double pearson_of_sums(double sa, double sb, double saa, double sbb, double sab,
                       std::size_t count) {
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

// Pearson correlation of the overlap of a and b shifted by (dx, dy), all
// three channels together.
double shifted_pearson(const Planes& a, const Planes& b, std::size_t side, int dx, int dy) {
  const int s = static_cast<int>(side);
  const std::size_t n = side * side;
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  const int x0 = std::max(0, dx);
  const int x1 = s + std::min(0, dx);
  std::size_t count = 0;
  for (std::size_t c = 0; c < 3; ++c) {
    for (int y = std::max(0, dy); y < s + std::min(0, dy); ++y) {
      const float* pa = a.data() + c * n + static_cast<std::size_t>(y * s);
      const float* pb = b.data() + c * n + static_cast<std::size_t>((y - dy) * s) - dx;
      // One row in float (at most 256 values of at most 255: exact enough),
      // vectorised; the rows are summed in double.
      float ra = 0, rb = 0, raa = 0, rbb = 0, rab = 0;
#pragma omp simd reduction(+ : ra, rb, raa, rbb, rab)
      for (int x = x0; x < x1; ++x) {
        const float va = pa[x];
        const float vb = pb[x];
        ra += va;
        rb += vb;
        raa += va * va;
        rbb += vb * vb;
        rab += va * vb;
      }
      sa += ra;
      sb += rb;
      saa += raa;
      sbb += rbb;
      sab += rab;
      count += static_cast<std::size_t>(x1 - x0);
    }
  }
  return pearson_of_sums(sa, sb, saa, sbb, sab, count);
}

// What an unshifted correlation needs of one image alone, summed exactly as
// shifted_pearson sums it: made once per prepared image, not once per pair.
struct PlaneSums {
  double sum = 0.0;
  double sum_sq = 0.0;
};

PlaneSums plane_sums(const Planes& a, std::size_t side) {
  PlaneSums sums;
  const float* p = a.data();
  for (std::size_t row = 0; row < 3 * side; ++row, p += side) {
    float r = 0, rr = 0;
#pragma omp simd reduction(+ : r, rr)
    for (std::size_t x = 0; x < side; ++x) {
      r += p[x];
      rr += p[x] * p[x];
    }
    sums.sum += r;
    sums.sum_sq += rr;
  }
  return sums;
}

// shifted_pearson(a, b, side, 0, 0) from the images' own sums: only the
// products of the pair are summed here.
double unshifted_pearson(const Planes& a, const PlaneSums& a_sums, const Planes& b,
                         const PlaneSums& b_sums, std::size_t side) {
  double sab = 0.0;
  const float* pa = a.data();
  const float* pb = b.data();
  for (std::size_t row = 0; row < 3 * side; ++row, pa += side, pb += side) {
    float r = 0;
#pragma omp simd reduction(+ : r)
    for (std::size_t x = 0; x < side; ++x) r += pa[x] * pb[x];
    sab += r;
  }
  return pearson_of_sums(a_sums.sum, b_sums.sum, a_sums.sum_sq, b_sums.sum_sq, sab,
                         3 * side * side);
}

// One colour image made ready for comparisons: blurred, and its centre zooms
// (made on first use). A record is compared with up to `candidates` others,
// and a stored candidate with many records (on look-alike data the same few
// come back again and again), so the images prepared on this thread are kept,
// the last kKept of them, found by a hash of their bytes and checked byte for
// byte. An entry records the parameters it was made with, so that two
// verifiers with different options on one thread never share planes.
struct PreparedImage {
  std::vector<std::uint8_t> rgb;
  double sigma = 0.0;
  Planes plain;
  PlaneSums plain_sums;
  std::vector<double> zoom_factors;  // those `zooms` were made for
  std::vector<Planes> zooms;         // empty until needed
  std::vector<PlaneSums> zoom_sums;
};

class PreparedImages {
 public:
  // Shared: an entry stays valid while in use even if it leaves the cache.
  std::shared_ptr<PreparedImage> get(const std::vector<std::uint8_t>& rgb, std::size_t side,
                                     double sigma) {
    std::uint64_t sigma_bits = 0;
    std::memcpy(&sigma_bits, &sigma, sizeof sigma);
    const std::uint64_t key = XXH3_64bits_withSeed(rgb.data(), rgb.size(), sigma_bits);
    const auto found = kept_.find(key);
    if (found != kept_.end() && found->second->sigma == sigma && found->second->rgb == rgb) {
      return found->second;
    }
    auto p = std::make_shared<PreparedImage>();
    p->rgb = rgb;
    p->sigma = sigma;
    p->plain = blurred(to_planes(rgb, side), side, sigma);
    p->plain_sums = plane_sums(p->plain, side);
    if (found != kept_.end()) {  // a hash collision: the newer image takes the slot
      found->second = p;
      return p;
    }
    if (order_.size() == kKept) {
      kept_.erase(order_.front());
      order_.pop_front();
    }
    kept_.emplace(key, p);
    order_.push_back(key);
    return p;
  }

 private:
  // About 15 KB each, 64 KB once zoomed: at most 64 MB per thread.
  static constexpr std::size_t kKept = 1024;
  std::unordered_map<std::uint64_t, std::shared_ptr<PreparedImage>> kept_;
  std::deque<std::uint64_t> order_;  // keys, oldest first
};

// Makes the image's centre zooms (and their sums) when first needed.
void make_zooms(PreparedImage& image, std::size_t side, const std::vector<double>& zooms) {
  if (image.zoom_factors == zooms) return;
  image.zooms.clear();
  image.zoom_sums.clear();
  for (const double zoom : zooms) {
    image.zooms.push_back(zoomed(image.plain, side, zoom));
    image.zoom_sums.push_back(plane_sums(image.zooms.back(), side));
  }
  image.zoom_factors = zooms;
}

// The best correlation over every shift, given that of the unshifted pair.
double best_over_shifts(const Planes& a, const Planes& b, std::size_t side, int max_shift,
                        double unshifted) {
  double best = unshifted;
  for (int dy = -max_shift; dy <= max_shift; ++dy) {
    for (int dx = -max_shift; dx <= max_shift; ++dx) {
      if (dx != 0 || dy != 0) best = std::max(best, shifted_pearson(a, b, side, dx, dy));
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
  WINNOW_THROW_IF_NOT(std::isfinite(options_.max_refine_gain) && options_.max_refine_gain >= 0.0 &&
                          options_.max_refine_gain <= 2.0,
                      "colour image verifier: max_refine_gain={} must be in [0, 2]",
                      options_.max_refine_gain);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.min_unshifted) && options_.min_unshifted >= -1.0 &&
                          options_.min_unshifted <= options_.threshold,
                      "colour image verifier: min_unshifted={} must be in [-1, threshold={}]",
                      options_.min_unshifted, options_.threshold);
  if (options_.max_zoom > 1.0) {
    for (int step = 1; step <= options_.zoom_steps; ++step) {
      zooms_.push_back(1.0 + (options_.max_zoom - 1.0) * step / options_.zoom_steps);
    }
  }
}

std::string ColourImageNearDuplicateVerifier::name() const {
  return fmt::format(
      "image-colour(side={},blur={},max_shift={},max_zoom={},min_unshifted={},max_refine_gain={}) "
      "else {}",
      options_.side, options_.blur_sigma, options_.max_shift, options_.max_zoom,
      options_.min_unshifted, options_.max_refine_gain, grey_.name());
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
  thread_local PreparedImages prepared;  // per thread: no lock
  const std::shared_ptr<PreparedImage> pa = prepared.get(a, side, options_.blur_sigma);
  const std::shared_ptr<PreparedImage> pb = prepared.get(b, side, options_.blur_sigma);
  // Coarse to fine. First the unshifted correlation: a near copy's stays
  // high (the blur makes the correlation smooth in shift and zoom), and most
  // pairs that reach the verifier on look-alike clip art fall below it here,
  // so they skip the shifts and zooms (docs/images.md, "the unshifted gate").
  const double unshifted =
      unshifted_pearson(pa->plain, pa->plain_sums, pb->plain, pb->plain_sums, side);
  if (unshifted < options_.min_unshifted) return unshifted;
  double best = best_over_shifts(pa->plain, pb->plain, side, options_.max_shift, unshifted);
  if (best >= options_.threshold || zooms_.empty()) return best;
  // Zooms only when the plain comparison fails: a re-encoded or resized copy
  // stops above, and the similarity reported is then the unzoomed one.
  // Coarse to fine: every zoom of either image unshifted, then the shifts
  // around the best two (the blurred correlation is smooth in zoom and shift,
  // and a crop is centred, so the best unshifted zoom is the one to refine).
  make_zooms(*pa, side, zooms_);
  make_zooms(*pb, side, zooms_);
  struct Zoomed {
    double unshifted;
    const Planes* a;
    const Planes* b;
  };
  std::vector<Zoomed> tried;
  for (std::size_t z = 0; z < zooms_.size(); ++z) {
    tried.push_back(
        {unshifted_pearson(pa->zooms[z], pa->zoom_sums[z], pb->plain, pb->plain_sums, side),
         &pa->zooms[z], &pb->plain});
    tried.push_back(
        {unshifted_pearson(pa->plain, pa->plain_sums, pb->zooms[z], pb->zoom_sums[z], side),
         &pa->plain, &pb->zooms[z]});
  }
  constexpr std::size_t kRefined = 2;
  const std::size_t refined = std::min(kRefined, tried.size());
  std::partial_sort(tried.begin(), tried.begin() + static_cast<std::ptrdiff_t>(refined),
                    tried.end(),
                    [](const Zoomed& x, const Zoomed& y) { return x.unshifted > y.unshifted; });
  // A shift of a pixel or so raises a blurred correlation by a bounded
  // amount (less than max_refine_gain for near copies), so a zoom whose
  // unshifted correlation is further than max_refine_gain below the
  // threshold is not refined.
  const double worth_refining = options_.threshold - options_.max_refine_gain;
  for (std::size_t i = 0; i < refined && best < options_.threshold; ++i) {
    if (tried[i].unshifted < worth_refining) break;  // sorted: the next is no better
    best = std::max(best, best_over_shifts(*tried[i].a, *tried[i].b, side, options_.max_shift,
                                           tried[i].unshifted));
  }
  return best;
}

}  // namespace winnow::curation::dedup
