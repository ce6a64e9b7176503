// Encoding an Image as a JPEG file in memory (libjpeg-turbo): the gallery's
// thumbnails.
#pragma once

#include <cstdint>
#include <vector>

#include "winnow/image/image.h"

namespace winnow::image {

// The JPEG bytes of `image` at `quality` (1-100), 4:2:0 chroma. Throws
// winnow::Error when the image is empty or libjpeg-turbo fails.
std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality = 80);

}  // namespace winnow::image
