// Resampling decoded images to a fixed working size.
//
// Area averaging: every output pixel is the mean of the source area it
// covers (fractional edges weighted), which is what a camera's sensor does
// and what survives re-encoding and resizing of the source best. The image is
// stretched to the target size: the aspect ratio is not kept (a copy cropped
// equally on all sides keeps its aspect ratio, so it still lines up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "winnow/image/image.h"

namespace winnow::image {

// `image` resampled to width x height, RGB, values rounded to 8 bits.
Image resize_area(const Image& image, std::size_t width, std::size_t height);

// The same for several sizes in one pass over `image` (each result exactly
// what resize_area gives for its size alone).
struct ImageSize {
  std::size_t width = 0;
  std::size_t height = 0;
};
std::vector<Image> resize_area(const Image& image, const std::vector<ImageSize>& sizes);

// Grey levels (ITU-R BT.601 luma, rounded) of an RGB image.
std::vector<std::uint8_t> grey_levels(const Image& image);

// Grey levels (ITU-R BT.601 luma, rounded) of `image` resampled to width x height.
std::vector<std::uint8_t> grey_thumbnail(const Image& image, std::size_t width, std::size_t height);

}  // namespace winnow::image
