#include <cstring>

#include "format_decoders.h"
#include "winnow/image/image_decoder.h"

namespace winnow::image {

const char* to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::jpeg:
      return "JPEG";
    case ImageFormat::png:
      return "PNG";
    case ImageFormat::webp:
      return "WebP";
    case ImageFormat::bmp:
      return "BMP";
    case ImageFormat::gif:
      return "GIF";
    case ImageFormat::unknown:
      break;
  }
  return "unknown";
}

ImageFormat sniff_image_format(const std::uint8_t* data, std::size_t size) {
  auto starts_with = [&](const char* magic, std::size_t n, std::size_t at = 0) {
    return size >= at + n && std::memcmp(data + at, magic, n) == 0;
  };
  if (starts_with("\xFF\xD8\xFF", 3)) return ImageFormat::jpeg;
  if (starts_with("\x89PNG\r\n\x1A\n", 8)) return ImageFormat::png;
  if (starts_with("RIFF", 4) && starts_with("WEBP", 4, 8)) return ImageFormat::webp;
  if (starts_with("GIF87a", 6) || starts_with("GIF89a", 6)) return ImageFormat::gif;
  if (starts_with("BM", 2) && size >= 26) return ImageFormat::bmp;
  return ImageFormat::unknown;
}

namespace detail {

void composite_on_white(const std::uint8_t* rgba, std::size_t pixels, std::uint8_t* rgb) {
  for (std::size_t i = 0; i < pixels; ++i, rgba += 4, rgb += 3) {
    const unsigned a = rgba[3];
    const unsigned paper = 255u * (255u - a);
    for (int c = 0; c < 3; ++c) {
      rgb[c] = static_cast<std::uint8_t>((rgba[c] * a + paper + 127u) / 255u);
    }
  }
}

}  // namespace detail

}  // namespace winnow::image
