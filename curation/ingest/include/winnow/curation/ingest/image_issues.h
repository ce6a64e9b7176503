// Image-quality issues, cleanvision-style: the thresholds that turn a decoded
// image's scores (winnow/image/image_quality.h) into issues, the dataset
// figures that odd size and grayscale-in-a-colour-set are judged against, and
// whether an issue only flags a sample or rejects it. Every score is in
// [0, 1], lower is worse, and an issue is a score below its threshold.
// Definitions and defaults: docs/images.md, "Image-quality issues".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/manifest_record.h"
#include "winnow/store/image_quality_table.h"

namespace winnow::curation::ingest {

struct ImageIssuePolicy {
  // flag: the sample keeps its decision and its issues are recorded;
  // reject: a sample with any issue is rejected, the reason naming them.
  enum class Action { flag, reject };
  Action action = Action::flag;
  // By store::ImageIssue (bench/image_quality.py measured them).
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

// Judges records' measurements against the policy and the dataset: one per
// ingest batch, seeded with the images stored before it.
class ImageIssueJudge {
 public:
  ImageIssueJudge(const ImageIssuePolicy& policy, store::ImageQualityTable& stored);

  // An image of the chunk about to be judged joins the dataset figures.
  void add(const ImageMeasurement& image);
  // The scores and issues of `image` (sample_id left 0).
  store::ImageQualityRecord judge(const ImageMeasurement& image);

 private:
  bool can_compare() const { return images_ >= policy_.min_reference_images; }
  double median_area();

  const ImageIssuePolicy& policy_;
  std::map<std::int64_t, std::int64_t> areas_;  // area -> images
  std::int64_t images_ = 0;
  std::int64_t colour_ = 0;
  std::int64_t median_of_ = -1;  // images_ when median_ was taken
  double median_ = 0.0;
};

// The rejection reason of an image with issues: the file and, per issue, its
// score and threshold.
std::string image_issues_reason(const std::string& path, const store::ImageQualityRecord& record,
                                const ImageIssuePolicy& policy);

}  // namespace winnow::curation::ingest
