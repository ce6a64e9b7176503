// WebP through libwebp (still images; an animation is refused rather than
// silently reduced to whatever frame the simple API would give).
#include <webp/decode.h>

#include <vector>

#include "format_decoders.h"
#include "winnow/error.h"

namespace winnow::image::detail {

namespace {

WebPBitstreamFeatures features_of(const std::uint8_t* data, std::size_t size) {
  WebPBitstreamFeatures features{};
  const VP8StatusCode status = WebPGetFeatures(data, size, &features);
  WINNOW_THROW_IF_NOT_KIND(status == VP8_STATUS_OK, invalid_input,
                           "unreadable WebP header (libwebp status {})", static_cast<int>(status));
  WINNOW_THROW_IF_NOT_KIND(!features.has_animation, invalid_input,
                           "animated WebP images are not supported");
  return features;
}

}  // namespace

ImageHeader webp_header(const std::uint8_t* data, std::size_t size) {
  const WebPBitstreamFeatures f = features_of(data, size);
  return {ImageFormat::webp, static_cast<std::size_t>(f.width), static_cast<std::size_t>(f.height)};
}

Image decode_webp(const std::uint8_t* data, std::size_t size) {
  const WebPBitstreamFeatures f = features_of(data, size);
  Image image;
  image.width = static_cast<std::size_t>(f.width);
  image.height = static_cast<std::size_t>(f.height);
  std::vector<std::uint8_t> rgba(image.width * image.height * 4);
  WINNOW_THROW_IF_NOT_KIND(WebPDecodeRGBAInto(data, size, rgba.data(), rgba.size(),
                                              static_cast<int>(image.width * 4)) != nullptr,
                           invalid_input, "corrupt or truncated WebP");
  image.rgb.resize(image.width * image.height * 3);
  composite_on_white(rgba.data(), image.width * image.height, image.rgb.data());
  return image;
}

}  // namespace winnow::image::detail
