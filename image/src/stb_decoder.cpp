// BMP and GIF (first frame) through Debian's stb_image (libstb): neither
// format has a better-kept decoding library that is as small. The header is
// read with stbi_info_from_memory so the caller's pixel limit applies before
// stb allocates anything. stb reads past the end of its input as zeros, so
// a truncated file would decode as a partly black image: the file's own
// structure is checked for completeness first (check_complete).
#include <stb/stb_image.h>

#include <limits>
#include <memory>

#include "format_decoders.h"
#include "winnow/error.h"

namespace winnow::image::detail {

namespace {

struct PixelsFree {
  void operator()(stbi_uc* p) const { stbi_image_free(p); }
};

int length_of(ImageFormat format, std::size_t size) {
  WINNOW_THROW_IF_NOT_KIND(size <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                           invalid_input, "{} file of {} bytes is too large", to_string(format),
                           size);
  return static_cast<int>(size);
}

std::uint32_t le32(const std::uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (std::uint32_t{p[3]} << 24);
}
std::uint16_t le16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

// An uncompressed BMP must hold every row its header promises; compressed
// (RLE) bitmaps are left to stb.
void check_bmp_complete(const std::uint8_t* data, std::size_t size) {
  WINNOW_THROW_IF_NOT_KIND(size >= 26, invalid_input, "truncated BMP header");
  const std::uint64_t pixel_offset = le32(data + 10);
  const std::uint32_t info_size = le32(data + 14);
  std::uint64_t width = 0, height = 0, bits = 0, compression = 0;
  if (info_size == 12) {  // OS/2 BITMAPCOREHEADER
    width = le16(data + 18);
    height = le16(data + 20);
    bits = le16(data + 24);
  } else {
    WINNOW_THROW_IF_NOT_KIND(size >= 34, invalid_input, "truncated BMP header");
    const auto w = static_cast<std::int32_t>(le32(data + 18));
    const auto h = static_cast<std::int32_t>(le32(data + 22));
    width = static_cast<std::uint64_t>(w < 0 ? -std::int64_t{w} : w);
    height = static_cast<std::uint64_t>(h < 0 ? -std::int64_t{h} : h);
    bits = le16(data + 28);
    compression = le32(data + 30);
  }
  if (compression != 0 && compression != 3) return;  // BI_RGB and BI_BITFIELDS only
  const std::uint64_t stride = (bits * width + 31) / 32 * 4;
  const std::uint64_t needed = pixel_offset + stride * height;
  WINNOW_THROW_IF_NOT_KIND(size >= needed, invalid_input,
                           "truncated BMP: {} bytes, its header needs {}", size, needed);
}

// A GIF must hold its first image whole: every block up to the end of the
// first image's data sub-blocks is walked (nothing is decoded here).
void check_gif_complete(const std::uint8_t* data, std::size_t size) {
  std::size_t pos = 13;  // signature and logical screen descriptor
  auto need = [&](std::size_t n) {
    WINNOW_THROW_IF_NOT_KIND(pos + n <= size, invalid_input,
                             "truncated GIF: it ends before its first image is complete");
  };
  auto skip_colour_table = [&](std::uint8_t packed) {
    if (packed & 0x80) pos += 3u << ((packed & 7) + 1);
  };
  auto skip_sub_blocks = [&] {
    for (;;) {
      need(1);
      const std::size_t length = data[pos++];
      if (length == 0) return;
      need(length);
      pos += length;
    }
  };
  need(0);
  skip_colour_table(data[10]);
  for (;;) {
    need(1);
    const std::uint8_t block = data[pos++];
    if (block == 0x21) {  // extension: label, then sub-blocks
      need(1);
      ++pos;
      skip_sub_blocks();
    } else if (block == 0x2C) {  // image descriptor
      need(9);
      const std::uint8_t packed = data[pos + 8];
      pos += 9;
      skip_colour_table(packed);
      need(1);
      ++pos;  // LZW minimum code size
      skip_sub_blocks();
      return;
    } else {
      WINNOW_THROW_KIND(invalid_input, "corrupt GIF: block 0x{:02x} before its first image", block);
    }
  }
}

void check_complete(ImageFormat format, const std::uint8_t* data, std::size_t size) {
  if (format == ImageFormat::bmp) check_bmp_complete(data, size);
  if (format == ImageFormat::gif) check_gif_complete(data, size);
}

}  // namespace

ImageHeader stb_header(ImageFormat format, const std::uint8_t* data, std::size_t size) {
  int w = 0, h = 0, channels = 0;
  WINNOW_THROW_IF_NOT_KIND(
      stbi_info_from_memory(data, length_of(format, size), &w, &h, &channels) == 1, invalid_input,
      "unreadable {} header: {}", to_string(format), stbi_failure_reason());
  return {format, static_cast<std::size_t>(w), static_cast<std::size_t>(h)};
}

Image decode_stb(ImageFormat format, const std::uint8_t* data, std::size_t size) {
  check_complete(format, data, size);
  int w = 0, h = 0, channels = 0;
  std::unique_ptr<stbi_uc, PixelsFree> rgba(
      stbi_load_from_memory(data, length_of(format, size), &w, &h, &channels, 4));
  WINNOW_THROW_IF_NOT_KIND(rgba != nullptr && w > 0 && h > 0, invalid_input,
                           "corrupt or truncated {}: {}", to_string(format),
                           rgba ? "zero size" : stbi_failure_reason());
  Image image;
  image.width = static_cast<std::size_t>(w);
  image.height = static_cast<std::size_t>(h);
  image.rgb.resize(image.width * image.height * 3);
  composite_on_white(rgba.get(), image.width * image.height, image.rgb.data());
  return image;
}

}  // namespace winnow::image::detail
