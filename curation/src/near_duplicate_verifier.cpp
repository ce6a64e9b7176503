#include "winnow/curation/near_duplicate_verifier.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "utf8.h"
#include "winnow/curation/content_hash.h"
#include "winnow/error.h"

namespace winnow::curation {

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
      std::int64_t sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
      for (long y = y0; y < y1; ++y) {
        const std::uint8_t* ra = a + y * w;
        const std::uint8_t* rb = b + (y + dy) * w + dx;
        std::int32_t ta = 0, tb = 0, taa = 0, tbb = 0, tab = 0;
        for (long x = x0; x < x1; ++x) {
          const std::int32_t va = ra[x];
          const std::int32_t vb = rb[x];
          ta += va;
          tb += vb;
          taa += va * va;
          tbb += vb * vb;
          tab += va * vb;
        }
        sa += ta;
        sb += tb;
        saa += taa;
        sbb += tbb;
        sab += tab;
      }
      const double n = static_cast<double>((x1 - x0) * (y1 - y0));
      const double va = static_cast<double>(saa) - static_cast<double>(sa) * sa / n;
      const double vb = static_cast<double>(sbb) - static_cast<double>(sb) * sb / n;
      const double cov = static_cast<double>(sab) - static_cast<double>(sa) * sb / n;
      double r;
      if (va <= 1e-9 && vb <= 1e-9) {
        r = sa == sb ? 1.0 : 0.0;  // both constant: equal or not
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
