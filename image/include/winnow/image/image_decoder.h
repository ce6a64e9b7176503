// Decoding image files from memory, safely for untrusted bytes.
//
// The format is recognised by its signature, not by the file name. The
// header is read first and an image over `max_pixels` (a decompression bomb:
// a few kilobytes of PNG can claim gigapixels) or of zero size is refused
// before any pixel buffer is allocated. Truncated or corrupt data is an
// error, never a partial image. Animated GIFs give their first frame;
// animated WebPs are refused. Grey, palette, RGB, RGBA and 16-bit inputs all
// come out as 8-bit RGB (Image). Details and the choice of libraries:
// docs/images.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "winnow/image/image.h"

namespace winnow::image {

struct DecodeOptions {
  // Images with more pixels (width x height, from the header) are refused.
  // 64 Mpx: a 8,000 x 8,000 photo fits; its RGBA buffer is 256 MiB.
  std::uint64_t max_pixels = kDefaultMaxPixels;
  // When both are set, a JPEG may be decoded at 1/2, 1/4 or 1/8 of its size
  // (libjpeg-turbo scales in the DCT domain, several times faster) as long as
  // both sides stay at least this large. Other formats decode at full size.
  std::size_t min_width = 0;
  std::size_t min_height = 0;

  static constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{64} << 20;
};

// The format of `size` bytes by their signature; unknown when none matches.
ImageFormat sniff_image_format(const std::uint8_t* data, std::size_t size);

// Format and size from the header alone. Throws winnow::Error
// (invalid_input) when the bytes are not an image of a known format or its
// header is unreadable.
ImageHeader read_image_header(const std::uint8_t* data, std::size_t size);

// The whole image (the first frame of a GIF). Throws winnow::Error
// (invalid_input) saying what is wrong: not an image, over max_pixels, zero
// size, truncated or corrupt.
Image decode_image(const std::uint8_t* data, std::size_t size, const DecodeOptions& options = {});

}  // namespace winnow::image
