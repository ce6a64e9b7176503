#include "winnow/curation/dedup/near_duplicate_verifier.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WINNOW_CURATION_HAVE_X86 1
#else
#define WINNOW_CURATION_HAVE_X86 0
#endif

#include "winnow/utf8.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/error.h"

namespace winnow::curation::dedup {

namespace {

// Sum of a[i] * b[i] over n pixel pairs, exact in integers.
std::int64_t pixel_products_portable(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  std::int64_t ab = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ab += static_cast<std::int64_t>(a[i]) * b[i];
  }
  return ab;
}

// Sum of n pixels.
std::int64_t pixel_total_portable(const std::uint8_t* a, std::size_t n) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += a[i];
  return sum;
}

#if WINNOW_CURATION_HAVE_X86
__attribute__((target("avx2"))) inline std::int64_t sum_epi32(__m256i v) {
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  std::int64_t total = 0;
  for (const std::int32_t lane : lanes) {
    total += lane;
  }
  return total;
}

// 16 pixel pairs per step, widened to 16 bits; _mm256_madd_epi16 adds pairs
// of products into 32-bit lanes. A lane gains at most 2 * 255 * 255 per step,
// so the lanes are emptied into a 64-bit total every 4096 steps.
__attribute__((target("avx2"))) std::int64_t pixel_products_avx2(const std::uint8_t* a,
                                                                 const std::uint8_t* b,
                                                                 std::size_t n) {
  std::int64_t ab = 0;
  std::size_t i = 0;
  while (i + 16 <= n) {
    __m256i sab = _mm256_setzero_si256();
    const std::size_t stop = std::min(n - (n - i) % 16, i + 16 * 4096);
    for (; i < stop; i += 16) {
      const __m256i va =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
      const __m256i vb =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
      sab = _mm256_add_epi32(sab, _mm256_madd_epi16(va, vb));
    }
    ab += sum_epi32(sab);
  }
  return ab + pixel_products_portable(a + i, b + i, n - i);
}

// The same with 32 pixel pairs per step.
__attribute__((target("avx512f,avx512bw"))) std::int64_t pixel_products_avx512(
    const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  std::int64_t ab = 0;
  std::size_t i = 0;
  while (i + 32 <= n) {
    __m512i sab = _mm512_setzero_si512();
    const std::size_t stop = std::min(n - (n - i) % 32, i + 32 * 4096);
    for (; i < stop; i += 32) {
      const __m512i va =
          _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
      const __m512i vb =
          _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
      sab = _mm512_add_epi32(sab, _mm512_madd_epi16(va, vb));
    }
    alignas(64) std::int32_t lanes[16];
    _mm512_store_si512(lanes, sab);
    for (const std::int32_t lane : lanes) ab += lane;
  }
  return ab + pixel_products_portable(a + i, b + i, n - i);
}

// Sum of n pixels: _mm512_sad_epu8 against zero adds 8 bytes into each
// 64-bit lane.
__attribute__((target("avx512f,avx512bw"))) std::int64_t pixel_total_avx512(const std::uint8_t* a,
                                                                            std::size_t n) {
  __m512i total = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    total =
        _mm512_add_epi64(total, _mm512_sad_epu8(_mm512_loadu_si512(a + i), _mm512_setzero_si512()));
  }
  alignas(64) std::int64_t lanes[8];
  _mm512_store_si512(lanes, total);
  std::int64_t sum = 0;
  for (const std::int64_t lane : lanes) sum += lane;
  for (; i < n; ++i) sum += a[i];
  return sum;
}
#endif

// The pixel kernels of this CPU: the widest it has (chosen once), else the
// portable loops.
struct PixelKernels {
  std::int64_t (*products)(const std::uint8_t*, const std::uint8_t*, std::size_t);
  std::int64_t (*total)(const std::uint8_t*, std::size_t);
};

const PixelKernels& pixel_kernels() {
  static const PixelKernels kernels = [] {
    PixelKernels k{&pixel_products_portable, &pixel_total_portable};
#if WINNOW_CURATION_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
      k = {&pixel_products_avx512, &pixel_total_avx512};
    } else if (__builtin_cpu_supports("avx2")) {
      k.products = &pixel_products_avx2;
    }
#endif
    return k;
  }();
  return kernels;
}

// The five sums of a Pearson correlation over the pixel pairs (a[i], b[i]).
struct PixelSums {
  std::int64_t a = 0, b = 0, aa = 0, bb = 0, ab = 0;
};

constexpr std::size_t kMaxShift = 8;  // ImageVerifierOptions::max_shift's bound

// The sums of one image's pixels and of their squares over any overlap a
// shift of at most `max_shift` leaves, by inclusion-exclusion: the whole
// image, less the rows and columns the shift cuts off, plus the corners cut
// twice. Computed once per image, so the shifts share them and only the
// products of the two images are summed per shift.
class ImageSums {
 public:
  ImageSums(const std::uint8_t* img, std::size_t width, std::size_t height, std::size_t max_shift,
            const PixelKernels& kernels)
      : img_(img), width_(width), height_(height) {
    const std::size_t n = width * height;
    whole_.sum = kernels.total(img, n);
    whole_.squares = kernels.products(img, img, n);
    for (std::size_t i = 0; i < std::min(max_shift, height); ++i) {
      top_[i] = line(i * width, 1, width);                    // row i
      bottom_[i] = line((height - 1 - i) * width, 1, width);  // row h - 1 - i
    }
    for (std::size_t j = 0; j < std::min(max_shift, width); ++j) {
      left_[j] = line(j, width, height);               // column j
      right_[j] = line(width - 1 - j, width, height);  // column w - 1 - j
    }
  }
  // Sum and sum of squares over columns [x0, x1) of rows [y0, y1); at most
  // max_shift columns or rows may be cut off on each side.
  void rectangle(long x0, long x1, long y0, long y1, std::int64_t& sum,
                 std::int64_t& squares) const {
    Sums s = whole_;
    const auto cut = [&s](const std::array<Sums, kMaxShift>& lines, std::size_t count) {
      for (std::size_t i = 0; i < count; ++i) s.remove(lines[i]);
    };
    const auto top = static_cast<std::size_t>(y0), bottom = height_ - static_cast<std::size_t>(y1);
    const auto left = static_cast<std::size_t>(x0), right = width_ - static_cast<std::size_t>(x1);
    cut(top_, top);
    cut(bottom_, bottom);
    cut(left_, left);
    cut(right_, right);
    // The corners were cut twice (as part of a row and of a column).
    for (long y = 0; y < static_cast<long>(height_); ++y) {
      if (y >= y0 && y < y1) {
        y = y1 - 1;  // skip the kept rows
        continue;
      }
      const std::uint8_t* row = img_ + static_cast<std::size_t>(y) * width_;
      for (std::size_t x = 0; x < left; ++x) s.add_pixel(row[x]);
      for (std::size_t x = width_ - right; x < width_; ++x) s.add_pixel(row[x]);
    }
    sum = s.sum;
    squares = s.squares;
  }

 private:
  struct Sums {
    std::int64_t sum = 0, squares = 0;
    void add_pixel(std::int64_t v) {
      sum += v;
      squares += v * v;
    }
    void remove(const Sums& o) {
      sum -= o.sum;
      squares -= o.squares;
    }
  };
  // Sums of `count` pixels from `first`, `stride` apart.
  Sums line(std::size_t first, std::size_t stride, std::size_t count) const {
    Sums s;
    for (std::size_t i = 0; i < count; ++i) s.add_pixel(img_[first + i * stride]);
    return s;
  }

  const std::uint8_t* img_;
  std::size_t width_, height_;
  Sums whole_;
  // The first max_shift lines from each side (max_shift <= kMaxShift).
  std::array<Sums, kMaxShift> top_{}, bottom_{}, left_{}, right_{};
};

}  // namespace

void image_shape(const ManifestRecord& record, std::size_t& width, std::size_t& height) {
  WINNOW_THROW_IF_NOT(record.has_image(), "record '{}' has {} content, not an image", record.key,
                      to_string(record.kind));
  if (record.width != 0) {
    WINNOW_THROW_IF_NOT(record.width * record.height == record.pixels.size(),
                        "record '{}': width {} x height {} does not match {} pixels", record.key,
                        record.width, record.height, record.pixels.size());
    width = record.width;
    height = record.height;
    return;
  }
  const auto side =
      static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(record.pixels.size()))));
  WINNOW_THROW_IF_NOT(side > 0 && side * side == record.pixels.size(),
                      "record '{}' has {} pixels and no width/height (not a square image)",
                      record.key, record.pixels.size());
  width = side;
  height = side;
}

ImageNearDuplicateVerifier::ImageNearDuplicateVerifier(ImageVerifierOptions options)
    : options_(options) {
  WINNOW_THROW_IF_NOT(
      options_.max_shift >= 0 && static_cast<std::size_t>(options_.max_shift) <= kMaxShift,
      "image verifier: max_shift={} must be in [0, {}]", options_.max_shift, kMaxShift);
  WINNOW_THROW_IF_NOT(
      std::isfinite(options_.threshold) && options_.threshold >= -1.0 && options_.threshold <= 1.0,
      "image verifier: threshold={} must be in [-1, 1]", options_.threshold);
}

std::string ImageNearDuplicateVerifier::name() const {
  return fmt::format("image-pearson(max_shift={})", options_.max_shift);
}

double ImageNearDuplicateVerifier::shifted_pearson(const std::uint8_t* a, const std::uint8_t* b,
                                                   std::size_t width, std::size_t height,
                                                   int max_shift) {
  const auto w = static_cast<long>(width);
  const auto h = static_cast<long>(height);
  WINNOW_THROW_IF_NOT(max_shift >= 0 && static_cast<std::size_t>(max_shift) <= kMaxShift,
                      "shifted Pearson: max_shift={} must be in [0, {}]", max_shift, kMaxShift);
  const PixelKernels& kernels = pixel_kernels();
  const ImageSums sums_a(a, width, height, static_cast<std::size_t>(max_shift), kernels),
      sums_b(b, width, height, static_cast<std::size_t>(max_shift), kernels);
  double best = -1.0;
  bool any = false;
  for (int dy = -max_shift; dy <= max_shift; ++dy) {
    for (int dx = -max_shift; dx <= max_shift; ++dx) {
      // Overlap: a(x, y) against b(x + dx, y + dy).
      const long x0 = std::max(0L, -static_cast<long>(dx));
      const long x1 = std::min(w, w - dx);
      const long y0 = std::max(0L, -static_cast<long>(dy));
      const long y1 = std::min(h, h - dy);
      if (x1 - x0 < 2 || y1 - y0 < 2) {
        continue;
      }
      // The overlap rows lie in one flat run of a, from (x0, y0) to (x1 - 1,
      // y1 - 1), against the same run of b moved by dy * w + dx (always in
      // bounds). The run also holds |dx| pixels between consecutive rows
      // (x >= x1 of one row, x < x0 of the next), taken back out below.
      const long offset = dy * w + dx;
      const long first = y0 * w + x0;
      const long last = (y1 - 1) * w + x1;  // one past the end
      std::int64_t ab =
          kernels.products(a + first, b + first + offset, static_cast<std::size_t>(last - first));
      if (dx != 0) {
        for (long y = y0; y + 1 < y1; ++y) {
          const long gap = y * w + x1;  // (x1, y) .. (x0 - 1, y + 1): w - x1 + x0 = |dx| pixels
          for (long x = gap; x < gap + w - x1 + x0; ++x)
            ab -= static_cast<std::int64_t>(a[x]) * b[x + offset];
        }
      }
      PixelSums s;
      s.ab = ab;
      sums_a.rectangle(x0, x1, y0, y1, s.a, s.aa);
      sums_b.rectangle(x0 + dx, x1 + dx, y0 + dy, y1 + dy, s.b, s.bb);
      const double n = static_cast<double>((x1 - x0) * (y1 - y0));
      const double va = static_cast<double>(s.aa) - static_cast<double>(s.a) * s.a / n;
      const double vb = static_cast<double>(s.bb) - static_cast<double>(s.b) * s.b / n;
      const double cov = static_cast<double>(s.ab) - static_cast<double>(s.a) * s.b / n;
      double r;
      if (va <= 1e-9 && vb <= 1e-9) {
        r = s.a == s.b ? 1.0 : 0.0;  // both constant: equal or not
      } else if (va <= 1e-9 || vb <= 1e-9) {
        r = 0.0;
      } else {
        r = cov / std::sqrt(va * vb);
      }
      best = any ? std::max(best, r) : r;
      any = true;
    }
  }
  return any ? std::clamp(best, -1.0, 1.0) : 0.0;
}

double ImageNearDuplicateVerifier::similarity(const ManifestRecord& a,
                                              const ManifestRecord& b) const {
  std::size_t wa = 0, ha = 0, wb = 0, hb = 0;
  image_shape(a, wa, ha);
  image_shape(b, wb, hb);
  if (wa != wb || ha != hb) {
    return 0.0;  // different sizes are never near duplicates here
  }
  return shifted_pearson(a.pixels.data(), b.pixels.data(), wa, ha, options_.max_shift);
}

TextNearDuplicateVerifier::TextNearDuplicateVerifier(TextVerifierOptions options)
    : options_(options) {
  WINNOW_THROW_IF_NOT(options_.shingle >= 1 && options_.shingle <= 64,
                      "text verifier: shingle={} must be in [1, 64]", options_.shingle);
  WINNOW_THROW_IF_NOT(
      std::isfinite(options_.threshold) && options_.threshold >= 0.0 && options_.threshold <= 1.0,
      "text verifier: threshold={} must be in [0, 1]", options_.threshold);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.min_jaccard) && options_.min_jaccard >= 0.0 &&
                          options_.min_jaccard <= options_.threshold,
                      "text verifier: min_jaccard={} must be in [0, threshold={}]",
                      options_.min_jaccard, options_.threshold);
}

std::string TextNearDuplicateVerifier::name() const {
  return fmt::format("text-overlap(shingle={},min_jaccard={})", options_.shingle,
                     options_.min_jaccard);
}

std::vector<std::uint64_t> TextNearDuplicateVerifier::shingles(const std::string& text, int n) {
  const std::vector<std::size_t> offs = winnow::codepoint_offsets(text);
  const std::size_t cps = offs.size() - 1;
  const auto un = static_cast<std::size_t>(n);
  std::vector<std::uint64_t> out;
  const std::string_view view(text);
  if (cps < un) {
    if (!text.empty()) {
      out.push_back(hash64(view));
    }
  } else {
    out.reserve(cps - un + 1);
    for (std::size_t i = 0; i + un <= cps; ++i) {
      out.push_back(hash64(view.substr(offs[i], offs[i + un] - offs[i])));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

std::size_t common_count(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::size_t common = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return common;
}

double jaccard_of(std::size_t common, std::size_t a, std::size_t b) {
  if (a == 0 && b == 0) return 1.0;
  return static_cast<double>(common) / static_cast<double>(a + b - common);
}

double overlap_of(std::size_t common, std::size_t a, std::size_t b) {
  const std::size_t smaller = std::min(a, b);
  if (smaller == 0) return a == b ? 1.0 : 0.0;
  return static_cast<double>(common) / static_cast<double>(smaller);
}

}  // namespace

double TextNearDuplicateVerifier::jaccard(const std::vector<std::uint64_t>& a,
                                          const std::vector<std::uint64_t>& b) {
  return jaccard_of(common_count(a, b), a.size(), b.size());
}

double TextNearDuplicateVerifier::overlap(const std::vector<std::uint64_t>& a,
                                          const std::vector<std::uint64_t>& b) {
  return overlap_of(common_count(a, b), a.size(), b.size());
}

double TextNearDuplicateVerifier::similarity(const ManifestRecord& a,
                                             const ManifestRecord& b) const {
  WINNOW_THROW_IF_NOT(a.kind == ContentKind::text && b.kind == ContentKind::text,
                      "text verifier: records '{}' ({}) and '{}' ({}) must both have text", a.key,
                      to_string(a.kind), b.key, to_string(b.kind));
  const std::vector<std::uint64_t> sa = shingles(a.text, options_.shingle);
  const std::vector<std::uint64_t> sb = shingles(b.text, options_.shingle);
  return similarity_of(common_count(sa, sb), sa.size(), sb.size());
}

// The rule on the counts: both measures grow with `common`, and the Jaccard
// (returned below min_jaccard) never exceeds the overlap (returned from
// there), so the result grows with `common` too: similarity_at_most relies
// on it.
double TextNearDuplicateVerifier::similarity_of(std::size_t common, std::size_t a,
                                                std::size_t b) const {
  const double jaccard = jaccard_of(common, a, b);
  if (jaccard < options_.min_jaccard) return jaccard;
  return overlap_of(common, a, b);
}

double TextNearDuplicateVerifier::similarity_at_most(const std::vector<std::uint64_t>& shingles,
                                                     const TextSketch& other) const {
  const std::size_t a = shingles.size(), b = other.size();
  const std::size_t most_common = std::min({other.max_common(shingles), a, b});
  return similarity_of(most_common, a, b);
}

}  // namespace winnow::curation::dedup
