#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "support/curation_test_helpers.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::embed;
using namespace winnow::curation::test;

namespace {

// The measure written the plain way: per shift, the five sums over the
// overlap rectangle, row by row. The verifier's vectorised version must give
// exactly the same value (its integer sums are exact).
double reference_shifted_pearson(const std::vector<std::uint8_t>& a,
                                 const std::vector<std::uint8_t>& b, long w, long h,
                                 int max_shift) {
  double best = -1.0;
  bool any = false;
  for (int dy = -max_shift; dy <= max_shift; ++dy) {
    for (int dx = -max_shift; dx <= max_shift; ++dx) {
      const long x0 = std::max(0L, -static_cast<long>(dx)), x1 = std::min(w, w - dx);
      const long y0 = std::max(0L, -static_cast<long>(dy)), y1 = std::min(h, h - dy);
      if (x1 - x0 < 2 || y1 - y0 < 2) continue;
      std::int64_t sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
      for (long y = y0; y < y1; ++y) {
        for (long x = x0; x < x1; ++x) {
          const std::int64_t va = a[static_cast<std::size_t>(y * w + x)];
          const std::int64_t vb = b[static_cast<std::size_t>((y + dy) * w + x + dx)];
          sa += va, sb += vb, saa += va * va, sbb += vb * vb, sab += va * vb;
        }
      }
      const double n = static_cast<double>((x1 - x0) * (y1 - y0));
      const double va = static_cast<double>(saa) - static_cast<double>(sa) * sa / n;
      const double vb = static_cast<double>(sbb) - static_cast<double>(sb) * sb / n;
      const double cov = static_cast<double>(sab) - static_cast<double>(sa) * sb / n;
      double r;
      if (va <= 1e-9 && vb <= 1e-9) {
        r = sa == sb ? 1.0 : 0.0;
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

}  // namespace

TEST_CASE("the vectorised shifted Pearson equals the plain computation", "[verifier]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pixel(0, 255);
  struct Shape {
    long w, h;
  };
  // Widths around the 16- and 32-pixel SIMD steps, tall and flat images, and one large
  // enough (300 x 300) to empty the 32-bit lanes more than once.
  for (const Shape shape : {Shape{28, 28}, Shape{3, 3}, Shape{5, 7}, Shape{17, 16}, Shape{33, 40},
                            Shape{64, 2}, Shape{1, 50}, Shape{300, 300}}) {
    for (const int max_shift : {0, 1, 2, 3, 8}) {  // 8: more than some images' sides
      INFO(shape.w << " x " << shape.h << ", max_shift " << max_shift);
      const auto size = static_cast<std::size_t>(shape.w * shape.h);
      std::vector<std::uint8_t> a(size), b(size), c(size, 200), d(size, 200);
      for (std::size_t i = 0; i < size; ++i) {
        a[i] = static_cast<std::uint8_t>(pixel(rng));
        // b: a shifted copy of a with noise, so some shifts correlate strongly.
        const std::size_t from = i >= 1 ? i - 1 : i;
        b[i] = static_cast<std::uint8_t>(std::clamp(a[from] + pixel(rng) / 16 - 8, 0, 255));
      }
      const auto W = static_cast<std::size_t>(shape.w), H = static_cast<std::size_t>(shape.h);
      for (const auto* pair : {&a, &b}) {
        for (const auto* other : {&a, &b, &c}) {
          CHECK(ImageNearDuplicateVerifier::shifted_pearson(pair->data(), other->data(), W, H,
                                                            max_shift) ==
                reference_shifted_pearson(*pair, *other, shape.w, shape.h, max_shift));
        }
      }
      CHECK(ImageNearDuplicateVerifier::shifted_pearson(c.data(), d.data(), W, H, max_shift) ==
            reference_shifted_pearson(c, d, shape.w, shape.h, max_shift));
    }
  }
}

TEST_CASE("an edited copy verifies and a different image does not", "[verifier]") {
  const auto& recs = fashion_test();
  const ImageNearDuplicateVerifier verifier;
  CHECK(verifier.threshold() == Approx(0.99));
  for (std::size_t i : {0u, 17u, 256u, 4000u}) {
    INFO("image " << i);
    const ManifestRecord copy = edited_copy(recs[i], 1, -1, 1.08, 5.0, static_cast<unsigned>(i));
    CHECK(verifier.similarity(copy, recs[i]) >= verifier.threshold());
    CHECK(verifier.similarity(recs[i], recs[i]) == Approx(1.0));
    CHECK(verifier.similarity(copy, recs[i + 1]) < verifier.threshold());
  }
  ManifestRecord text;
  text.key = "t";
  text.kind = ContentKind::text;
  text.text = "x";
  CHECK_THROWS_AS(verifier.similarity(text, recs[0]), winnow::Error);
}

TEST_CASE("text near duplicates use shingle Jaccard", "[verifier]") {
  const TextNearDuplicateVerifier verifier;
  ManifestRecord a, b, c;
  a.kind = b.kind = c.kind = ContentKind::text;
  a.text = "Winnow keeps the data set clean by dropping near duplicate samples early.";
  b.text = "Winnow keeps the data set clean by dropping near-duplicate samples early.";
  c.text = "An entirely different sentence about label noise and annotators.";
  CHECK(verifier.similarity(a, a) == 1.0);
  CHECK(verifier.similarity(a, b) >= 0.8);
  CHECK(verifier.similarity(a, c) < 0.1);
}

TEST_CASE("the finder returns the planted original on a real slice", "[finder]") {
  const auto& recs = fashion_test();
  const std::size_t n = 1000;
  EmbedderOptions eopt;
  eopt.width = eopt.height = 28;
  const auto embedder = make_embedder("pixels(fourier=6)", eopt);
  auto index = winnow::index::make_vector_index("flat", embedder->dim());
  const ImageNearDuplicateVerifier verifier;
  const NearDuplicateFinder finder(*index, verifier);
  const RecordLookup lookup = [&](std::int64_t id) { return &recs[static_cast<std::size_t>(id)]; };

  // Empty index: nothing found, thresholds still reported.
  const auto v0 = embedder->embed(recs[0]);
  const NearDuplicateMatch empty = finder.find(v0.data(), recs[0], lookup);
  CHECK_FALSE(empty.found);
  CHECK(empty.id == -1);
  CHECK(empty.threshold == Approx(0.99));
  CHECK(empty.candidates == 10);

  std::vector<float> vecs(n * embedder->dim());
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    embedder->embed(recs[i], vecs.data() + i * embedder->dim());
    ids[i] = static_cast<std::int64_t>(i);
  }
  index->add(ids, vecs);
  int found = 0;
  for (std::size_t i = 0; i < 50; ++i) {
    const std::size_t src = i * 19;
    const ManifestRecord copy =
        edited_copy(recs[src], (i % 3) - 1, 1, 0.92, 4.0, static_cast<unsigned>(i));
    const auto v = embedder->embed(copy);
    const NearDuplicateMatch m = finder.find(v.data(), copy, lookup);
    found += m.found && m.id == static_cast<std::int64_t>(src);
    CHECK(m.candidates_checked > 0);
  }
  CHECK(found >= 48);
  // Unseen images of the same set are (almost) never matched.
  int false_matches = 0;
  for (std::size_t i = n; i < n + 200; ++i) {
    const auto v = embedder->embed(recs[i]);
    false_matches += finder.find(v.data(), recs[i], lookup).found;
  }
  CHECK(false_matches <= 4);
}
