// libFuzzer target: image files (JPEG, PNG, WebP, BMP, GIF) decoded from
// memory, resampled to a working image and measured for image quality. Errors must be
// winnow::Error, never a crash, a hang or an allocation past the pixel limit (a header claiming
// gigapixels over a few bytes must fail before any pixel buffer exists).
#include <cstddef>
#include <cstdint>

#include "winnow/error.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_quality.h"
#include "winnow/image/image_resize.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winnow::image::DecodeOptions options;
  options.max_pixels = std::uint64_t{4} << 20;  // RGBA of 16 MiB: under -malloc_limit_mb
  options.min_width = 56;
  options.min_height = 56;
  try {
    const winnow::image::Image image = winnow::image::decode_image(data, size, options);
    (void)winnow::image::grey_thumbnail(image, 28, 28);
    (void)winnow::image::measure_image_quality(image);
  } catch (const winnow::Error&) {
  }
  return 0;
}
