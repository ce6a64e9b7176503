// Image-quality issues, cleanvision-style: a decoded image's scores
// (winnow/image/image_quality.h) judged against the dataset's policy
// (config/image_issue_policy.h) and the dataset figures that odd size and
// grayscale-in-a-colour-set are judged against. Definitions and defaults:
// docs/images.md, "Image-quality issues".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "winnow/curation/config/image_issue_policy.h"
#include "winnow/curation/core/manifest_record.h"
#include "winnow/store/image_quality_table.h"

namespace winnow::curation::judge {

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

}  // namespace winnow::curation::judge
