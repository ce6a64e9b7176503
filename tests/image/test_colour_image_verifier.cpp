// The colour verifier of decoded image files: crops of a few percent and
// brightness changes are found by the zoom search on blurred colour images;
// a recoloured picture is told apart from its original, which the grey
// measure cannot; pairs without colour fall back to the grey verifier.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "winnow/curation/dedup/colour_image_verifier.h"
#include "winnow/curation/core/manifest_record.h"
#include "winnow/error.h"
#include "winnow/image/image_resize.h"

namespace {

using namespace winnow;
using namespace winnow::curation;
using namespace winnow::curation::dedup;

// A smooth colour picture with some structure: discs of different colours
// on a light background, 256 x 256.
image::Image picture() {
  image::Image im;
  im.width = im.height = 256;
  im.rgb.assign(256 * 256 * 3, 235);
  const struct {
    double x, y, r;
    std::uint8_t c[3];
  } discs[] = {{80, 90, 50, {200, 40, 40}},
               {170, 80, 35, {40, 160, 60}},
               {120, 180, 60, {30, 60, 200}},
               {200, 190, 25, {220, 200, 30}}};
  for (std::size_t y = 0; y < 256; ++y) {
    for (std::size_t x = 0; x < 256; ++x) {
      for (const auto& d : discs) {
        if (std::hypot(double(x) - d.x, double(y) - d.y) < d.r) {
          for (int c = 0; c < 3; ++c) im.rgb[(y * 256 + x) * 3 + c] = d.c[c];
        }
      }
    }
  }
  return im;
}

image::Image cropped(const image::Image& in, std::size_t margin) {
  image::Image out;
  out.width = in.width - 2 * margin;
  out.height = in.height - 2 * margin;
  for (std::size_t y = margin; y < in.height - margin; ++y) {
    const auto* row = in.rgb.data() + (y * in.width + margin) * 3;
    out.rgb.insert(out.rgb.end(), row, row + out.width * 3);
  }
  return out;
}

// A decoded image file's record: grey 28 x 28 and colour 32 x 32.
ManifestRecord record_of(const image::Image& im) {
  ManifestRecord r;
  r.kind = ContentKind::path;
  r.pixels = image::grey_thumbnail(im, 28, 28);
  r.width = r.height = 28;
  r.colour = image::resize_area(im, 32, 32).rgb;
  return r;
}

const ColourImageNearDuplicateVerifier kVerifier({}, {});

}  // namespace

TEST_CASE("colour verifier: an identical image is 1, a 4% crop is found by the zoom search",
          "[image][dedup]") {
  const image::Image original = picture();
  const ManifestRecord a = record_of(original);
  CHECK(kVerifier.similarity(a, a) == Approx(1.0));
  const ManifestRecord crop = record_of(cropped(original, 10));  // 3.9% per side
  const double with_zoom = kVerifier.similarity(a, crop);
  CHECK(with_zoom >= kVerifier.threshold_for(a, crop));
  // Without the zoom search the same pair fails: the zoom is what finds it.
  ColourImageVerifierOptions no_zoom;
  no_zoom.max_zoom = 1.0;
  const ColourImageNearDuplicateVerifier plain(no_zoom, {});
  CHECK(plain.similarity(a, crop) < plain.threshold());
  CHECK(plain.similarity(a, crop) < with_zoom);
}

TEST_CASE("colour verifier: brighter copies match, a recoloured picture does not",
          "[image][dedup]") {
  const image::Image original = picture();
  image::Image brighter = original;
  for (auto& v : brighter.rgb) v = static_cast<std::uint8_t>(std::min(255.0, v * 1.1));
  CHECK(kVerifier.similarity(record_of(original), record_of(brighter)) >= kVerifier.threshold());
  // Red and blue swapped: the same shapes and about the same grey levels.
  image::Image recoloured = original;
  for (std::size_t i = 0; i < recoloured.rgb.size(); i += 3) {
    std::swap(recoloured.rgb[i], recoloured.rgb[i + 2]);
  }
  const ManifestRecord a = record_of(original);
  const ManifestRecord b = record_of(recoloured);
  CHECK(kVerifier.similarity(a, b) < kVerifier.threshold());
  ManifestRecord a_grey = a, b_grey = b;
  a_grey.colour.clear();
  b_grey.colour.clear();
  const ImageNearDuplicateVerifier grey;
  CHECK(grey.similarity(a_grey, b_grey) > kVerifier.similarity(a, b));
}

TEST_CASE("colour verifier: a pair without colour is the grey verifier's", "[image][dedup]") {
  const image::Image original = picture();
  const ManifestRecord a = record_of(original);
  ManifestRecord pixels = record_of(original);
  pixels.kind = ContentKind::pixels;
  pixels.colour.clear();
  const ImageNearDuplicateVerifier grey;
  CHECK(kVerifier.threshold_for(a, pixels) == grey.threshold());
  CHECK(kVerifier.threshold_for(a, a) == kVerifier.threshold());
  CHECK(kVerifier.similarity(a, pixels) == Approx(grey.similarity(a, pixels)));
  CHECK_THROWS_AS(kVerifier.colour_similarity(a.colour, std::vector<std::uint8_t>(10)), Error);
  ColourImageVerifierOptions bad;
  bad.max_zoom = 3.0;
  CHECK_THROWS_WITH(ColourImageNearDuplicateVerifier(bad, {}), Catch::Contains("max_zoom=3"));
}

TEST_CASE("colour verifier: verifiers with different options on one thread do not share work",
          "[image][dedup]") {
  // Prepared images are cached per thread; each verifier must still see its
  // own blur and zooms. Expected values come from fresh threads (empty caches).
  const ManifestRecord a = record_of(picture());
  const ManifestRecord crop = record_of(cropped(picture(), 12));
  ColourImageVerifierOptions sharp;
  sharp.blur_sigma = 0.0;
  sharp.max_zoom = 1.06;
  const ColourImageNearDuplicateVerifier other(sharp, {});
  const auto alone = [&](const ColourImageNearDuplicateVerifier& v) {
    double out = 0.0;
    std::thread([&] { out = v.similarity(a, crop); }).join();
    return out;
  };
  const double expected_default = alone(kVerifier);
  const double expected_other = alone(other);
  REQUIRE(expected_default != Approx(expected_other));
  double in_turn_other = 0.0, in_turn_default = 0.0;
  std::thread([&] {
    in_turn_other = other.similarity(a, crop);
    in_turn_default = kVerifier.similarity(a, crop);
  }).join();
  CHECK(in_turn_other == Approx(expected_other));
  CHECK(in_turn_default == Approx(expected_default));
}

TEST_CASE(
    "colour verifier: the gates stop unrelated pairs early and keep the full search's "
    "decisions",
    "[image][dedup]") {
  // Without gates (min_unshifted -1, max_refine_gain 2) every pair gets the
  // whole search; the defaults must decide every pair the same way.
  ColourImageVerifierOptions full_options;
  full_options.min_unshifted = -1.0;
  full_options.max_refine_gain = 2.0;
  const ColourImageNearDuplicateVerifier full(full_options, {});
  const image::Image original = picture();
  image::Image stripes = original;  // another drawing on the same light background
  for (std::size_t y = 0; y < 256; ++y) {
    for (std::size_t x = 0; x < 256; ++x) {
      const bool band = (x / 40) % 2 == 1 && y > 30 && y < 226;
      for (std::size_t c = 0; c < 3; ++c) {
        stripes.rgb[(y * 256 + x) * 3 + c] = band ? static_cast<std::uint8_t>(60 + 50 * c) : 235;
      }
    }
  }
  image::Image brighter_crop = cropped(original, 8);
  for (auto& v : brighter_crop.rgb) v = static_cast<std::uint8_t>(std::min(255.0, v * 1.08));
  const ManifestRecord a = record_of(original);
  int stopped_early = 0;
  for (const image::Image& other :
       {original, cropped(original, 6), cropped(original, 12), brighter_crop, stripes}) {
    const ManifestRecord b = record_of(other);
    const double gated = kVerifier.similarity(a, b);
    const double searched = full.similarity(a, b);
    CHECK((gated >= kVerifier.threshold()) == (searched >= full.threshold()));
    CHECK(gated <= searched + 1e-12);  // a gate reports a lower bound
    if (gated < searched) ++stopped_early;
  }
  // The stripes are unrelated: stopped at the unshifted gate, their reported
  // similarity is below min_unshifted.
  CHECK(kVerifier.similarity(a, record_of(stripes)) < ColourImageVerifierOptions{}.min_unshifted);
  CHECK(stopped_early >= 1);

  ColourImageVerifierOptions bad;
  bad.min_unshifted = 0.99;  // above the threshold: no pair could pass
  CHECK_THROWS_WITH(ColourImageNearDuplicateVerifier(bad, {}), Catch::Contains("min_unshifted"));
  bad = {};
  bad.max_refine_gain = -0.1;
  CHECK_THROWS_WITH(ColourImageNearDuplicateVerifier(bad, {}), Catch::Contains("max_refine_gain"));
}
