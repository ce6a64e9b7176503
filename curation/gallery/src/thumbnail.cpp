#include "thumbnail.h"

#include <algorithm>
#include <vector>

#include "winnow/curation/core/base64.h"
#include "winnow/curation/core/regular_file.h"
#include "winnow/curation/dataset/lookup/stored_record.h"
#include "winnow/error.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_encoder.h"
#include "winnow/image/image_resize.h"

namespace winnow::curation::gallery {

namespace {

constexpr std::uint64_t kMaxImageFileBytes = std::uint64_t{256} << 20;

std::string base64_of(const std::vector<std::uint8_t>& bytes) {
  return base64_encode(bytes.data(), bytes.size());
}

// `image` shrunk (never enlarged past 4x) so its longer side is spec.side,
// as a JPEG data: URI.
std::string data_uri(const image::Image& image, const ThumbnailSpec& spec) {
  const std::size_t longer = std::max(image.width, image.height);
  const double scale = std::min(4.0, static_cast<double>(spec.side) / static_cast<double>(longer));
  const auto side = [&](std::size_t n) {
    return std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(n) * scale + 0.5));
  };
  const std::size_t width = side(image.width), height = side(image.height);
  image::Image small;
  if (scale < 1.0) {
    small = image::resize_area(image, width, height);
  } else {  // small pictures (28 x 28) grow by whole pixels, so they stay sharp
    small.width = width;
    small.height = height;
    small.rgb.resize(width * height * 3);
    for (std::size_t y = 0; y < height; ++y) {
      for (std::size_t x = 0; x < width; ++x) {
        const std::size_t sx = std::min(image.width - 1, x * image.width / width);
        const std::size_t sy = std::min(image.height - 1, y * image.height / height);
        std::copy_n(&image.rgb[(sy * image.width + sx) * 3], 3, &small.rgb[(y * width + x) * 3]);
      }
    }
  }
  return "data:image/jpeg;base64," + base64_of(image::encode_jpeg(small, spec.quality));
}

}  // namespace

std::string file_thumbnail(const std::string& path, const ThumbnailSpec& spec) {
  FileLimits limits;
  limits.max_bytes = kMaxImageFileBytes;
  limits.follow_links = true;
  const std::vector<unsigned char> bytes = read_regular_file(path, limits, "image file");
  image::DecodeOptions options;
  if (spec.max_pixels > 0) options.max_pixels = spec.max_pixels;
  options.min_width = options.min_height = spec.side;  // a JPEG may decode smaller, faster
  return data_uri(image::decode_image(bytes.data(), bytes.size(), options), spec);
}

std::string stored_thumbnail(const store::StoredContent& c, const ThumbnailSpec& spec) {
  // The content as the store's one mapping reads it back: grey pixels, and a
  // decoded file's square colour working image after them.
  const std::optional<ManifestRecord> record = stored_record(0, c);
  if (!record || !record->has_image()) return {};
  image::Image picture;
  std::size_t side = 0;
  while ((side + 1) * (side + 1) * 3 <= record->colour.size()) ++side;
  const std::size_t grey = record->width * record->height;
  if (side > 0 && side * side * 3 == record->colour.size()) {
    picture.width = picture.height = side;
    picture.rgb = record->colour;
  } else if (grey > 0 && record->pixels.size() >= grey) {
    picture.width = record->width;
    picture.height = record->height;
    picture.rgb.reserve(grey * 3);
    for (std::size_t i = 0; i < grey; ++i)
      picture.rgb.insert(picture.rgb.end(), 3, record->pixels[i]);
  } else {
    return {};
  }
  return data_uri(picture, spec);
}

}  // namespace winnow::curation::gallery
