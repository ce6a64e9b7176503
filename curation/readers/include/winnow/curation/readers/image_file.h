// Image files named by `path` records: decoded once, while the reader has
// the file's bytes for its content hash, into the grey working image that the
// embedder embeds and the near-duplicate verifier compares (stored with the
// sample, so later batches compare against it without the file), and measured
// for its image-quality scores (image_issues.h).
// docs/images.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/image/image_decoder.h"

namespace winnow::curation::readers {

struct ImageReading {
  // The working image: the decoded image resampled (area average, stretched)
  // to width x height grey levels. 0 x 0: image files are not decoded.
  std::size_t width = 0;
  std::size_t height = 0;
  // Images with more pixels (from the header, before decoding) are refused.
  std::uint64_t max_pixels = image::DecodeOptions::kDefaultMaxPixels;
  // The colour working image (record.colour): colour_side x colour_side RGB,
  // compared by the near-duplicate verifier; 0: none.
  std::size_t colour_side = 0;

  bool enabled() const { return width > 0 && height > 0; }
};

// When `bytes` are an image file (by signature) and reading is enabled, sets
// the record's working images (pixels, width, height; colour) and its
// image_quality, and returns nothing.
// Returns the reason when the file looks like an image but cannot be decoded
// (truncated, corrupt, over max_pixels, zero size). Other files are left as
// they are: the embedder says they are not images.
std::optional<std::string> attach_working_image(const std::vector<unsigned char>& bytes,
                                                const ImageReading& reading,
                                                ManifestRecord& record);

}  // namespace winnow::curation::readers
