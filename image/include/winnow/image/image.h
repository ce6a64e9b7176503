// A decoded image: 8-bit RGB, rows top to bottom, alpha already composited on
// white (a transparent clip-art background reads as paper, not as black).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace winnow::image {

enum class ImageFormat { unknown, jpeg, png, webp, bmp, gif };

// "unknown", "JPEG", "PNG", "WebP", "BMP" or "GIF".
const char* to_string(ImageFormat format);

struct Image {
  std::size_t width = 0;
  std::size_t height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3
};

// The grey level of one RGB pixel: ITU-R BT.601 luma, rounded.
inline std::uint8_t luma(const std::uint8_t* rgb) {
  return static_cast<std::uint8_t>((299u * rgb[0] + 587u * rgb[1] + 114u * rgb[2] + 500u) / 1000u);
}

// What the file's header says, before any pixel is decoded.
struct ImageHeader {
  ImageFormat format = ImageFormat::unknown;
  std::size_t width = 0;
  std::size_t height = 0;
};

}  // namespace winnow::image
