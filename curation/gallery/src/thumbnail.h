// A sample's picture for the gallery: a small JPEG as a data: URI, made by
// winnow's own decoder, resizer and encoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "winnow/store/vector_table.h"

namespace winnow::curation::gallery {

struct ThumbnailSpec {
  std::size_t side = 112;  // the longer side, px
  int quality = 75;
  std::uint64_t max_pixels = 0;  // of a decoded file; 0: the decoder's default
};

// The picture of the image file at `path` (read as a user's own file: links
// followed). Throws winnow::Error saying why it cannot be read or decoded.
std::string file_thumbnail(const std::string& path, const ThumbnailSpec& spec);

// The picture of stored content (grey pixels, a decoded file's working
// image); "" for content that is not a picture (text, a path).
std::string stored_thumbnail(const store::StoredContent& content, const ThumbnailSpec& spec);

}  // namespace winnow::curation::gallery
