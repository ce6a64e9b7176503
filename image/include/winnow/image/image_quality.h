// Image-quality scores of a decoded image (cleanvision's issues: blurry,
// dark, bright, low information, grayscale). Sharpness is measured on a
// fixed-size analysis image, so that it does not depend on the file's
// resolution; tones and colour on the decoded pixels (percentiles, which a
// resolution hardly moves, and a thin dark outline keeps its darkness).
//
// Every score is in [0, 1] and lower means more of the problem: an image has
// the issue when its score is below the threshold (the thresholds
// and what each score means: docs/images.md, "Image-quality issues"). The
// issues that need the image's file size (odd aspect ratio) or the dataset
// (odd size, grayscale in a colour set) are judged above this library, in
// curation; this header measures one image, nothing else.
#pragma once

#include <cstddef>

#include "winnow/image/image.h"

namespace winnow::image {

struct ImageQualityScores {
  // Edge sharpness: the energy of the Laplacian over the energy of the
  // gradient of the grey analysis image, divided by 8 (its largest value, a
  // one-pixel checkerboard). A blurred edge of width sigma pixels gives about
  // 1 / (2 sigma^2) before the division. 1 for an image without edges.
  double blurry = 1.0;
  // The 99.9th percentile of luma (BT.601, 0..1) of the decoded pixels: dark
  // when even the brightest tones are dim.
  double dark = 1.0;
  // 1 - the 0.1th percentile of luma: bright when even the darkest tones are light.
  double bright = 1.0;
  // The 99th minus the 1st percentile of luma: a nearly uniform image.
  double low_information = 1.0;
  // The 99th percentile of the per-pixel channel spread max(R,G,B) - min(R,G,B),
  // over 255: 0 for a grey image.
  double grayscale = 1.0;
};

// The analysis image's longer side: images are area-averaged down to it
// (aspect ratio kept); smaller images are measured as they are.
inline constexpr std::size_t kQualityAnalysisSide = 64;
// The percentiles read at most this many decoded pixels (every k-th pixel of
// every k-th row of a larger image).
inline constexpr std::size_t kQualityToneSamples = std::size_t{1} << 15;

// The scores of `image` (any size; an empty image gets the defaults, 1).
ImageQualityScores measure_image_quality(const Image& image);

}  // namespace winnow::image
