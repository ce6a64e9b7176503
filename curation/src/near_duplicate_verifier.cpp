#include "winnow/curation/near_duplicate_verifier.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WINNOW_CURATION_HAVE_X86 1
#else
#define WINNOW_CURATION_HAVE_X86 0
#endif

#include "utf8.h"
#include "winnow/curation/content_hash.h"
#include "winnow/error.h"

namespace winnow::curation {

namespace {

// Sums over n pixel pairs (a[i], b[i]): the five terms of a Pearson
// correlation, exact in integers.
struct PixelPairSums {
  std::int64_t a = 0, b = 0, aa = 0, bb = 0, ab = 0;
  void subtract(const PixelPairSums& o) {
    a -= o.a;
    b -= o.b;
    aa -= o.aa;
    bb -= o.bb;
    ab -= o.ab;
  }
};

PixelPairSums pixel_pair_sums_portable(const std::uint8_t* a, const std::uint8_t* b,
                                       std::size_t n) {
  PixelPairSums s;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t va = a[i];
    const std::int64_t vb = b[i];
    s.a += va;
    s.b += vb;
    s.aa += va * va;
    s.bb += vb * vb;
    s.ab += va * vb;
  }
  return s;
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
// so the lanes are emptied into 64-bit totals every 4096 steps.
__attribute__((target("avx2"))) PixelPairSums pixel_pair_sums_avx2(const std::uint8_t* a,
                                                                 const std::uint8_t* b,
                                                                 std::size_t n) {
  PixelPairSums s;
  const __m256i ones = _mm256_set1_epi16(1);
  std::size_t i = 0;
  while (i + 16 <= n) {
    __m256i sa = _mm256_setzero_si256(), sb = sa, saa = sa, sbb = sa, sab = sa;
    const std::size_t stop = std::min(n - (n - i) % 16, i + 16 * 4096);
    for (; i < stop; i += 16) {
      const __m256i va = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
      const __m256i vb = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
      sa = _mm256_add_epi32(sa, _mm256_madd_epi16(va, ones));
      sb = _mm256_add_epi32(sb, _mm256_madd_epi16(vb, ones));
      saa = _mm256_add_epi32(saa, _mm256_madd_epi16(va, va));
      sbb = _mm256_add_epi32(sbb, _mm256_madd_epi16(vb, vb));
      sab = _mm256_add_epi32(sab, _mm256_madd_epi16(va, vb));
    }
    s.a += sum_epi32(sa);
    s.b += sum_epi32(sb);
    s.aa += sum_epi32(saa);
    s.bb += sum_epi32(sbb);
    s.ab += sum_epi32(sab);
  }
  const PixelPairSums tail = pixel_pair_sums_portable(a + i, b + i, n - i);
  s.a += tail.a;
  s.b += tail.b;
  s.aa += tail.aa;
  s.bb += tail.bb;
  s.ab += tail.ab;
  return s;
}
#endif

using PixelPairSumsKernel = PixelPairSums (*)(const std::uint8_t*, const std::uint8_t*,
                                              std::size_t);

// The AVX2 kernel where the CPU has it (chosen once), else the portable loop.
PixelPairSumsKernel pixel_pair_sums_kernel() {
  static const PixelPairSumsKernel kernel = [] {
#if WINNOW_CURATION_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
      return &pixel_pair_sums_avx2;
    }
#endif
    return &pixel_pair_sums_portable;
  }();
  return kernel;
}

}  // namespace

void image_shape(const ManifestRecord& record, std::size_t& width, std::size_t& height) {
  WINNOW_THROW_IF_NOT(record.kind == ContentKind::pixels,
                      "record '{}' has {} content, not pixels", record.key, to_string(record.kind));
  if (record.width != 0) {
    WINNOW_THROW_IF_NOT(record.width * record.height == record.pixels.size(),
                        "record '{}': width {} x height {} does not match {} pixels", record.key,
                        record.width, record.height, record.pixels.size());
    width = record.width;
    height = record.height;
    return;
  }
  const auto side = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(record.pixels.size()))));
  WINNOW_THROW_IF_NOT(side > 0 && side * side == record.pixels.size(),
                      "record '{}' has {} pixels and no width/height (not a square image)",
                      record.key, record.pixels.size());
  width = side;
  height = side;
}

ImageNearDuplicateVerifier::ImageNearDuplicateVerifier(ImageVerifierOptions options)
    : options_(options) {
  WINNOW_THROW_IF_NOT(options_.max_shift >= 0 && options_.max_shift <= 8,
                      "image verifier: max_shift={} must be in [0, 8]", options_.max_shift);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.threshold) && options_.threshold >= -1.0 &&
                          options_.threshold <= 1.0,
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
  const PixelPairSumsKernel pair_sums = pixel_pair_sums_kernel();
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
      PixelPairSums s =
          pair_sums(a + first, b + first + offset, static_cast<std::size_t>(last - first));
      if (dx != 0) {
        for (long y = y0; y + 1 < y1; ++y) {
          const long gap = y * w + x1;  // (x1, y) .. (x0 - 1, y + 1): w - x1 + x0 = |dx| pixels
          s.subtract(pixel_pair_sums_portable(a + gap, b + gap + offset,
                                              static_cast<std::size_t>(w - x1 + x0)));
        }
      }
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

double ImageNearDuplicateVerifier::similarity(const ManifestRecord& a, const ManifestRecord& b) const {
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
  WINNOW_THROW_IF_NOT(std::isfinite(options_.threshold) && options_.threshold >= 0.0 &&
                          options_.threshold <= 1.0,
                      "text verifier: threshold={} must be in [0, 1]", options_.threshold);
}

std::string TextNearDuplicateVerifier::name() const {
  return fmt::format("text-jaccard(shingle={})", options_.shingle);
}

std::vector<std::uint64_t> TextNearDuplicateVerifier::shingles(const std::string& text, int n) {
  const std::vector<std::size_t> offs = detail::codepoint_offsets(text);
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

double TextNearDuplicateVerifier::jaccard(const std::vector<std::uint64_t>& a,
                                          const std::vector<std::uint64_t>& b) {
  if (a.empty() && b.empty()) {
    return 1.0;
  }
  std::size_t inter = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++inter;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(inter) / static_cast<double>(a.size() + b.size() - inter);
}

double TextNearDuplicateVerifier::similarity(const ManifestRecord& a, const ManifestRecord& b) const {
  WINNOW_THROW_IF_NOT(a.kind == ContentKind::text && b.kind == ContentKind::text,
                      "text verifier: records '{}' ({}) and '{}' ({}) must both have text", a.key,
                      to_string(a.kind), b.key, to_string(b.kind));
  return jaccard(shingles(a.text, options_.shingle), shingles(b.text, options_.shingle));
}

}  // namespace winnow::curation
