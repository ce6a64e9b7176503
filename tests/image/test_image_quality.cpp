// measure_image_quality on synthetic images: a drawing of coloured shapes
// on white, and the same drawing blurred, darkened, faded, flattened,
// desaturated; the analysis image makes the scores independent of size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "image_test_files.h"
#include "winnow/image/image_quality.h"

using namespace winnow::image;
using namespace winnow::image::test;

namespace {

// Random filled rectangles and dark outlines on white, `side` x `side`.
Image drawing(std::size_t side, unsigned seed = 7) {
  Image image;
  image.width = image.height = side;
  image.rgb.assign(side * side * 3, 255);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> at(0, side - 1);
  std::uniform_int_distribution<int> colour(0, 255);
  for (int shape = 0; shape < 12; ++shape) {
    std::size_t x0 = at(rng), x1 = at(rng), y0 = at(rng), y1 = at(rng);
    if (x0 > x1) std::swap(x0, x1);
    if (y0 > y1) std::swap(y0, y1);
    const std::uint8_t rgb[3] = {static_cast<std::uint8_t>(colour(rng)),
                                 static_cast<std::uint8_t>(colour(rng)),
                                 static_cast<std::uint8_t>(colour(rng))};
    const std::size_t outline = std::max<std::size_t>(1, side / 100);
    for (std::size_t y = y0; y <= y1; ++y) {
      for (std::size_t x = x0; x <= x1; ++x) {
        const bool edge =
            x < x0 + outline || x + outline > x1 || y < y0 + outline || y + outline > y1;
        for (int c = 0; c < 3; ++c) image.rgb[3 * (y * side + x) + c] = edge ? 20 : rgb[c];
      }
    }
  }
  return image;
}

}  // namespace

TEST_CASE("image quality: an untouched drawing has no issue", "[image][quality]") {
  const ImageQualityScores s = measure_image_quality(drawing(256));
  // Above every default threshold (ImageIssuePolicy: 0.125, 0.4, 0.4, 0.15, 0.06).
  CHECK(s.blurry > 0.2);
  CHECK(s.dark == Approx(1.0));  // white paper
  CHECK(s.bright > 0.8);         // dark outlines
  CHECK(s.low_information > 0.7);
  CHECK(s.grayscale > 0.3);
}

TEST_CASE("image quality: each planted problem lowers its own score", "[image][quality]") {
  const Image original = drawing(256);
  const ImageQualityScores o = measure_image_quality(original);

  const ImageQualityScores blur = measure_image_quality(blurred(original, 6));
  CHECK(blur.blurry < 0.125);
  CHECK(blur.blurry < o.blurry / 4);

  const ImageQualityScores dark =
      measure_image_quality(mapped(original, [](double v) { return 0.3 * v; }));
  CHECK(dark.dark < 0.4);
  CHECK(dark.bright > 0.9);                             // dark is not bright
  CHECK(dark.blurry == Approx(o.blurry).epsilon(0.2));  // nor blurry

  const ImageQualityScores faded =
      measure_image_quality(mapped(original, [](double v) { return 255 - 0.3 * (255 - v); }));
  CHECK(faded.bright < 0.4);
  CHECK(faded.dark == Approx(1.0));

  const ImageQualityScores flat =
      measure_image_quality(mapped(original, [](double v) { return 180 + 0.05 * (v - 180); }));
  CHECK(flat.low_information < 0.15);
  CHECK(o.low_information > 0.15);

  const ImageQualityScores grey = measure_image_quality(desaturated(original, 0.0));
  CHECK(grey.grayscale == 0.0);
  CHECK(measure_image_quality(desaturated(original, 0.03)).grayscale < 0.06);
  CHECK(grey.blurry == Approx(o.blurry).epsilon(0.1));  // the rest unchanged
  CHECK(grey.low_information == Approx(o.low_information).margin(0.05));
}

TEST_CASE("image quality: scores do not depend on the file's resolution", "[image][quality]") {
  // The same drawing at 1024 and 512 px is measured on the same 128 px image.
  const ImageQualityScores large = measure_image_quality(drawing(1024));
  const ImageQualityScores small = measure_image_quality(drawing(512));
  CHECK(large.blurry == Approx(small.blurry).margin(0.03));
  CHECK(large.low_information == Approx(small.low_information).margin(0.03));
  CHECK(large.grayscale == Approx(small.grayscale).margin(0.03));
  // A blur of the same share of the image size reads the same at both sizes.
  const double blur_large = measure_image_quality(blurred(drawing(1024), 24)).blurry;
  const double blur_small = measure_image_quality(blurred(drawing(512), 12)).blurry;
  CHECK(blur_large < 0.125);
  CHECK(blur_small < 0.125);
  CHECK(blur_large == Approx(blur_small).margin(0.02));
}

TEST_CASE("image quality: degenerate images get neutral scores", "[image][quality]") {
  const ImageQualityScores empty = measure_image_quality(Image{});
  CHECK(empty.blurry == 1.0);
  CHECK(empty.low_information == 1.0);
  Image white;
  white.width = white.height = 40;
  white.rgb.assign(40 * 40 * 3, 255);
  const ImageQualityScores w = measure_image_quality(white);
  CHECK(w.blurry == 1.0);           // no edges: not blurry, but ...
  CHECK(w.low_information == 0.0);  // ... nearly uniform
  CHECK(w.bright == 0.0);
  Image one;
  one.width = one.height = 1;
  one.rgb = {10, 200, 30};
  CHECK(measure_image_quality(one).grayscale == Approx(190.0 / 255));
}
