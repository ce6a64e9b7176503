// The image-quality issue policy of a dataset: the thresholds that turn a
// decoded image's scores (winnow/image/image_quality.h) into issues, and
// whether an issue only flags a sample or rejects it. Every score is in
// [0, 1], lower is worse, and an issue is a score below its threshold.
// Definitions and defaults: docs/images.md, "Image-quality issues".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/store/image_quality_table.h"

namespace winnow::curation {

struct ImageIssuePolicy {
  // flag: the sample keeps its decision and its issues are recorded;
  // reject: a sample with any issue is rejected, the reason naming them.
  enum class Action { flag, reject };
  Action action = Action::flag;
  // By store::ImageIssue (chosen with bench/image_quality.py).
  std::array<double, store::kImageIssueCount> thresholds = {
      0.125,  // blurry: edge sharpness (Laplacian over gradient energy / 8)
      0.4,    // dark: 99.9th percentile of luma
      0.4,    // bright: 1 - 0.1th percentile of luma
      0.15,   // low_information: 99th - 1st percentile of luma
      0.06,   // grayscale: 99th percentile of the channel spread
      0.5,    // odd_aspect_ratio: shorter side / longer side
      0.2,    // odd_size: sqrt(area) against the dataset's median, the smaller ratio
  };
  // Grayscale is an issue only in a colour set: when at least this share of
  // the dataset's images have colour (a grayscale score at its threshold or above).
  double colour_set_share = 0.8;
  // Odd size and grayscale are judged once the dataset (stored images and
  // the chunk being decided) holds at least this many images.
  std::int64_t min_reference_images = 20;

  double threshold(store::ImageIssue issue) const {
    return thresholds[static_cast<std::size_t>(issue)];
  }
  nlohmann::json to_json() const;
  // Missing fields keep their defaults; throws winnow::Error naming a bad field.
  static ImageIssuePolicy from_json(const nlohmann::json& json);
  void validate() const;
};

// "flag" or "reject"; parse_image_issue_action throws for anything else.
const char* to_string(ImageIssuePolicy::Action action);
ImageIssuePolicy::Action parse_image_issue_action(const std::string& text);

}  // namespace winnow::curation
