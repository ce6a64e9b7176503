// One header reader and one decoder per library (image_decoder.cpp picks by
// signature). Each throws winnow::Error (invalid_input) with the library's
// own words for what is wrong; limits are checked by the caller between the
// two calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "winnow/image/image.h"
#include "winnow/image/image_decoder.h"

namespace winnow::image::detail {

ImageHeader jpeg_header(const std::uint8_t* data, std::size_t size);
Image decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& options);

ImageHeader png_header(const std::uint8_t* data, std::size_t size);
Image decode_png(const std::uint8_t* data, std::size_t size);

ImageHeader webp_header(const std::uint8_t* data, std::size_t size);
Image decode_webp(const std::uint8_t* data, std::size_t size);

// BMP and GIF (first frame), through stb_image.
ImageHeader stb_header(ImageFormat format, const std::uint8_t* data, std::size_t size);
Image decode_stb(ImageFormat format, const std::uint8_t* data, std::size_t size);

// RGBA (8-bit, straight alpha) to RGB composited on white, in place order.
void composite_on_white(const std::uint8_t* rgba, std::size_t pixels, std::uint8_t* rgb);

}  // namespace winnow::image::detail
