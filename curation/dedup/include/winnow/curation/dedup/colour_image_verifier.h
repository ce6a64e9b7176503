// Verifying near duplicates among decoded image files on their colour
// working images, robust to the edits a re-submitted photo or drawing
// typically has: re-encoding, resizing, a crop of a few percent per side and
// a brightness change.
//
// The measure: both colour images (side x side RGB, area-averaged from the
// file) are blurred (Gaussian, blur_sigma pixels) so that resampling and
// thin-line aliasing do not count; then the Pearson correlation of all three
// channels is maximised over shifts in [-max_shift, max_shift]^2 and over
// centre zooms of either image (a crop of f per side seen at the working
// size is a zoom by 1 / (1 - 2f)), coarse to fine: pairs whose unshifted
// correlation is under min_unshifted stop there. Colour keeps a recoloured drawing apart
// from its original, which the grey measure cannot.
//
// A pair where either record has no colour image (a `pixels` record, or an
// image stored before colour images existed) is compared by the grey
// verifier, with the grey verifier's threshold.
// Details and the measurements behind the defaults: docs/images.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "winnow/curation/dedup/near_duplicate_verifier.h"

namespace winnow::curation::dedup {

struct ColourImageVerifierOptions {
  std::size_t side = 32;    // the colour working image is side x side RGB
  double blur_sigma = 0.7;  // pixels of the working image
  int max_shift = 1;        // pixels of the working image
  double max_zoom = 1.12;   // a crop of up to 5.4% per side
  int zoom_steps = 4;       // zooms tried between 1 and max_zoom, each way
  double threshold = 0.96;  // Pearson of the blurred colour images
  // Pairs whose unshifted correlation is below this are not near copies and
  // skip the shift and zoom search (their similarity is that correlation).
  // Set well below what any near copy found in trials had (docs/images.md).
  double min_unshifted = 0.4;
  // A zoom is refined over shifts only when its unshifted correlation is
  // within this of the threshold (above the largest gain refining gave on
  // near copies; docs/images.md).
  double max_refine_gain = 0.3;
};

class ColourImageNearDuplicateVerifier final : public NearDuplicateVerifier {
 public:
  ColourImageNearDuplicateVerifier(ColourImageVerifierOptions options,
                                   ImageVerifierOptions grey_options);
  std::string name() const override;
  double threshold() const override { return options_.threshold; }
  double threshold_for(const ManifestRecord& a, const ManifestRecord& b) const override;
  double similarity(const ManifestRecord& a, const ManifestRecord& b) const override;

  // The measure on two side x side RGB images.
  double colour_similarity(const std::vector<std::uint8_t>& a,
                           const std::vector<std::uint8_t>& b) const;

 private:
  bool both_in_colour(const ManifestRecord& a, const ManifestRecord& b) const;

  ColourImageVerifierOptions options_;
  ImageNearDuplicateVerifier grey_;
  std::vector<double> zooms_;  // > 1, applied to either image
};

}  // namespace winnow::curation::dedup
