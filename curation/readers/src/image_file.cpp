#include "winnow/curation/readers/image_file.h"

#include <fmt/format.h>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"
#include "winnow/image/image_quality.h"
#include "winnow/image/image_resize.h"

namespace winnow::curation::readers {

std::optional<std::string> attach_working_image(const std::vector<unsigned char>& bytes,
                                                const ImageReading& reading,
                                                ManifestRecord& record) {
  if (!reading.enabled()) return std::nullopt;
  const image::ImageFormat format = image::sniff_image_format(bytes.data(), bytes.size());
  if (format == image::ImageFormat::unknown) return std::nullopt;
  image::DecodeOptions options;
  options.max_pixels = reading.max_pixels;
  // A JPEG may come out of the DCT at a smaller scale, but with at least 4
  // source pixels per working pixel: at 2 the DCT's own downscaling differs
  // enough from the area average of the full image that re-encoded copies
  // were missed; 4 finds the same copies and flags the same quality issues
  // as 8, for half the decoding (docs/benchmarks.md, "Image decoding").
  constexpr std::size_t kMinSourcePixels = 4;
  options.min_width = kMinSourcePixels * reading.width;
  options.min_height = kMinSourcePixels * reading.height;
  try {
    const image::ImageHeader header = image::read_image_header(bytes.data(), bytes.size());
    const image::Image decoded = image::decode_image(bytes.data(), bytes.size(), options);
    // The grey working image and the colour thumbnail in one pass.
    std::vector<image::ImageSize> sizes = {{reading.width, reading.height}};
    if (reading.colour_side > 0) sizes.push_back({reading.colour_side, reading.colour_side});
    std::vector<image::Image> small = image::resize_area(decoded, sizes);
    record.pixels = image::grey_levels(small[0]);
    record.width = reading.width;
    record.height = reading.height;
    if (reading.colour_side > 0) record.colour = std::move(small[1].rgb);
    // Exact duplicates by picture, not by bytes: a re-saved file is the same
    // content (docs/images.md).
    record.content_hash = dedup::decoded_image_hash(decoded.width, decoded.height, decoded.rgb);
    // The quality scores come from the decoded image (a JPEG perhaps at 1/2
    // to 1/8 scale: still at least 4 x the working size, more than the
    // 64-pixel analysis image needs); the size is the file's.
    record.image_quality =
        ImageMeasurement{header.width, header.height, image::measure_image_quality(decoded)};
  } catch (const Error& e) {
    return fmt::format("path '{}' is a {} file that cannot be decoded: {}",
                       printable_text(record.path, 240), image::to_string(format), e.what());
  }
  return std::nullopt;
}

}  // namespace winnow::curation::readers
