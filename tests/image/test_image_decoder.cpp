#include <catch2/catch.hpp>

#include <string>

#include "image_test_files.h"
#include "progressive_jpeg.h"
#include "winnow/error.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_resize.h"

using namespace winnow::image;
using namespace winnow::image::test;

namespace {

Image decoded(const std::string& name) {
  const std::vector<std::uint8_t> bytes = fixture(name);
  REQUIRE(!bytes.empty());
  return decode_image(bytes.data(), bytes.size());
}

// The fixtures: a 24 x 18 canvas, red at alpha 128 with an opaque blue
// ellipse around (9, 7).
const std::uint8_t* pixel(const Image& image, std::size_t x, std::size_t y) {
  return image.rgb.data() + 3 * (y * image.width + x);
}

}  // namespace

TEST_CASE("every fixture format decodes to its full size", "[image]") {
  for (const char* name :
       {"rgba.png", "palette.png", "grey.png", "baseline.jpg", "progressive.jpg", "grey.jpg",
        "cmyk.jpg", "lossy.webp", "lossless.webp", "rgb.bmp", "palette.gif", "two_frames.gif"}) {
    INFO(name);
    const Image image = decoded(name);
    CHECK(image.width == 24);
    CHECK(image.height == 18);
    CHECK(image.rgb.size() == 24 * 18 * 3);
  }
  const Image grey16 = decoded("grey16.png");
  CHECK(grey16.width == 9);
  CHECK(grey16.height == 7);
}

TEST_CASE("transparency is composited on white, not black", "[image]") {
  // Red at alpha 128 over white is pink: (255, 127, 127), give or take rounding.
  for (const char* name : {"rgba.png", "lossless.webp"}) {
    INFO(name);
    const Image image = decoded(name);
    const std::uint8_t* corner = pixel(image, 0, 0);
    CHECK(corner[0] == 255);
    CHECK(corner[1] >= 120);
    CHECK(corner[1] <= 135);
    const std::uint8_t* inside = pixel(image, 9, 7);  // opaque blue
    CHECK(inside[2] >= 240);
    CHECK(inside[0] <= 15);
  }
}

TEST_CASE("the header gives format and size without decoding", "[image]") {
  const std::vector<std::uint8_t> bytes = fixture("baseline.jpg");
  const ImageHeader h = read_image_header(bytes.data(), bytes.size());
  CHECK(h.format == ImageFormat::jpeg);
  CHECK(h.width == 24);
  CHECK(h.height == 18);
  const std::vector<std::uint8_t> gif = fixture("palette.gif");
  CHECK(sniff_image_format(gif.data(), gif.size()) == ImageFormat::gif);
}

TEST_CASE("a decompression bomb is refused from its header", "[image]") {
  const std::vector<std::uint8_t> bomb = png_claiming(20000, 20000);
  CHECK(read_image_header(bomb.data(), bomb.size()).width == 20000);
  CHECK_THROWS_WITH(decode_image(bomb.data(), bomb.size()),
                    Catch::Contains("20000 x 20000 = 400000000 pixels is over the limit"));
  DecodeOptions small;
  small.max_pixels = 100;
  const std::vector<std::uint8_t> fine = fixture("rgba.png");
  CHECK_THROWS_WITH(decode_image(fine.data(), fine.size(), small),
                    Catch::Contains("over the limit of 100 pixels"));
}

TEST_CASE("zero-size, truncated, corrupt and foreign files are errors", "[image]") {
  const std::vector<std::uint8_t> zero = png_claiming(0, 5);
  CHECK_THROWS_AS(decode_image(zero.data(), zero.size()), winnow::Error);
  for (const char* name : {"rgba.png", "baseline.jpg", "lossy.webp", "rgb.bmp", "palette.gif"}) {
    INFO(name);
    std::vector<std::uint8_t> bytes = fixture(name);
    bytes.resize(bytes.size() * 2 / 3);
    CHECK_THROWS_AS(decode_image(bytes.data(), bytes.size()), winnow::Error);
  }
  std::vector<std::uint8_t> flipped = fixture("rgba.png");
  flipped[40] ^= 0xFF;  // inside IDAT: its CRC no longer matches
  CHECK_THROWS_WITH(decode_image(flipped.data(), flipped.size()), Catch::Contains("PNG"));
  const std::string text = "just some text, long enough to not be a header";
  CHECK_THROWS_WITH(decode_image(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                    Catch::Contains("not an image file"));
}

TEST_CASE("a large JPEG may decode at a DCT scale, never below the wanted size", "[image]") {
  Image big;
  big.width = 400;
  big.height = 300;
  big.rgb.assign(400 * 300 * 3, 0);
  for (std::size_t i = 0; i < big.rgb.size(); ++i)
    big.rgb[i] = static_cast<std::uint8_t>(i / 3 % 400 / 2);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(big, 90);
  DecodeOptions options;
  options.min_width = 56;
  options.min_height = 56;
  const Image scaled = decode_image(jpeg.data(), jpeg.size(), options);
  CHECK(scaled.width == 100);  // 1/4: 1/8 would give 50 x 38, under 56
  CHECK(scaled.height == 75);
  CHECK(decode_image(jpeg.data(), jpeg.size()).width == 400);
}

TEST_CASE("area resampling to several sizes in one pass gives each size's own result", "[image]") {
  std::uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int trial = 0; trial < 20; ++trial) {
    Image image;
    image.width = 1 + next() % 300;
    image.height = 1 + next() % 300;
    image.rgb.resize(image.width * image.height * 3);
    for (auto& v : image.rgb) v = static_cast<std::uint8_t>(next() >> 24);
    const ImageSize a{1 + next() % 40, 1 + next() % 40}, b{1 + next() % 40, 1 + next() % 40};
    const std::vector<Image> both = resize_area(image, {a, b});
    REQUIRE(both.size() == 2);
    CHECK(both[0].rgb == resize_area(image, a.width, a.height).rgb);
    CHECK(both[1].rgb == resize_area(image, b.width, b.height).rgb);
    CHECK(both[1].width == b.width);
    CHECK(grey_levels(both[0]) == grey_thumbnail(image, a.width, a.height));
  }
  CHECK_THROWS_WITH(resize_area(Image{}, {ImageSize{2, 2}}), Catch::Contains("cannot resize"));
}

TEST_CASE("area resampling averages and keeps flat images flat", "[image]") {
  Image image;
  image.width = 4;
  image.height = 2;
  image.rgb = {0, 0, 0, 100, 100, 100, 200, 200, 200, 40, 40, 40,  //
               0, 0, 0, 100, 100, 100, 200, 200, 200, 40, 40, 40};
  const Image half = resize_area(image, 2, 1);
  CHECK(half.rgb == std::vector<std::uint8_t>{50, 50, 50, 120, 120, 120});
  const Image third = resize_area(image, 3, 2);  // fractional edges: 4/3 source pixels each
  CHECK(third.rgb[0] == 25);                     // (0 + 100 / 3) * 3 / 4
  Image flat;
  flat.width = 37;
  flat.height = 23;
  flat.rgb.assign(37 * 23 * 3, 77);
  for (auto [w, h] : {std::pair{28, 28}, std::pair{5, 3}, std::pair{64, 50}}) {
    const std::vector<std::uint8_t> grey = grey_thumbnail(flat, w, h);
    CHECK(grey.size() == static_cast<std::size_t>(w * h));
    CHECK(std::all_of(grey.begin(), grey.end(), [](std::uint8_t v) { return v == 77; }));
  }
}

TEST_CASE("a progressive JPEG of more than 500 scans is refused, an ordinary one decodes",
          "[image]") {
  const std::vector<std::uint8_t> ordinary = progressive_jpeg(64, false);
  CHECK(jpeg_scans(ordinary) < 20);
  const Image image = decode_image(ordinary.data(), ordinary.size());
  CHECK(image.width == 64);
  // Each scan is a pass over the image: thousands of them in a small file
  // would hold the decoder for minutes.
  const std::vector<std::uint8_t> bomb = progressive_jpeg(64, true);
  CHECK(jpeg_scans(bomb) > 500);
  CHECK_THROWS_WITH(decode_image(bomb.data(), bomb.size()),
                    Catch::Contains("JPEG") && Catch::Contains("500 scans"));
}
