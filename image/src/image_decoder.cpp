#include "winnow/image/image_decoder.h"

#include "format_decoders.h"
#include "winnow/error.h"

namespace winnow::image {

ImageHeader read_image_header(const std::uint8_t* data, std::size_t size) {
  const ImageFormat format = sniff_image_format(data, size);
  switch (format) {
    case ImageFormat::jpeg:
      return detail::jpeg_header(data, size);
    case ImageFormat::png:
      return detail::png_header(data, size);
    case ImageFormat::webp:
      return detail::webp_header(data, size);
    case ImageFormat::bmp:
    case ImageFormat::gif:
      return detail::stb_header(format, data, size);
    case ImageFormat::unknown:
      break;
  }
  WINNOW_THROW_KIND(invalid_input, "not an image file (JPEG, PNG, WebP, BMP or GIF)");
}

Image decode_image(const std::uint8_t* data, std::size_t size, const DecodeOptions& options) {
  const ImageHeader header = read_image_header(data, size);
  const char* format = to_string(header.format);
  WINNOW_THROW_IF_NOT_KIND(header.width > 0 && header.height > 0, invalid_input,
                           "{} image of zero size ({} x {})", format, header.width, header.height);
  // Checked before anything is allocated; the product cannot overflow since
  // both sides come from 32-bit header fields.
  const std::uint64_t pixels = std::uint64_t{header.width} * header.height;
  WINNOW_THROW_IF_NOT_KIND(pixels <= options.max_pixels, invalid_input,
                           "{} image of {} x {} = {} pixels is over the limit of {} pixels "
                           "(max_image_pixels)",
                           format, header.width, header.height, pixels, options.max_pixels);
  Image image;
  switch (header.format) {
    case ImageFormat::jpeg:
      image = detail::decode_jpeg(data, size, options);
      break;
    case ImageFormat::png:
      image = detail::decode_png(data, size);
      break;
    case ImageFormat::webp:
      image = detail::decode_webp(data, size);
      break;
    default:
      image = detail::decode_stb(header.format, data, size);
      break;
  }
  WINNOW_THROW_IF_NOT_KIND(
      image.width > 0 && image.height > 0 && image.rgb.size() == image.width * image.height * 3,
      internal, "{} decoder returned an image of inconsistent size", format);
  return image;
}

}  // namespace winnow::image
