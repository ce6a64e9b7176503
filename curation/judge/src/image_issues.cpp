#include "winnow/curation/judge/image_issues.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation::judge {

namespace {

using nlohmann::json;
using store::ImageIssue;

double measured(const image::ImageQualityScores& s, ImageIssue issue) {
  switch (issue) {
    case ImageIssue::blurry:
      return s.blurry;
    case ImageIssue::dark:
      return s.dark;
    case ImageIssue::bright:
      return s.bright;
    case ImageIssue::low_information:
      return s.low_information;
    case ImageIssue::grayscale:
      return s.grayscale;
    default:
      return 1.0;  // not measured on the pixels
  }
}

std::int64_t area(const ImageMeasurement& image) {
  return static_cast<std::int64_t>(image.width) * static_cast<std::int64_t>(image.height);
}

}  // namespace

ImageIssueJudge::ImageIssueJudge(const ImageIssuePolicy& policy, store::ImageQualityTable& stored)
    : policy_(policy) {
  for (const auto& [a, count] : stored.count_by_area()) {
    areas_[a] += count;
    images_ += count;
  }
  colour_ = stored.count_colour(policy_.threshold(ImageIssue::grayscale));
}

void ImageIssueJudge::add(const ImageMeasurement& image) {
  ++areas_[area(image)];
  ++images_;
  if (image.scores.grayscale >= policy_.threshold(ImageIssue::grayscale)) ++colour_;
}

// The lower median of the areas, taken again only when images were added.
double ImageIssueJudge::median_area() {
  if (median_of_ != images_) {
    std::int64_t seen = 0;
    const std::int64_t wanted = (images_ - 1) / 2;
    for (const auto& [a, count] : areas_) {
      seen += count;
      if (seen > wanted) {
        median_ = static_cast<double>(a);
        break;
      }
    }
    median_of_ = images_;
  }
  return median_;
}

store::ImageQualityRecord ImageIssueJudge::judge(const ImageMeasurement& image) {
  store::ImageQualityRecord r;
  r.width = static_cast<std::int64_t>(image.width);
  r.height = static_cast<std::int64_t>(image.height);
  for (ImageIssue issue : {ImageIssue::blurry, ImageIssue::dark, ImageIssue::bright,
                           ImageIssue::low_information, ImageIssue::grayscale}) {
    r.scores[static_cast<std::size_t>(issue)] = measured(image.scores, issue);
  }
  const double shorter = static_cast<double>(std::min(image.width, image.height));
  const double longer = static_cast<double>(std::max(image.width, image.height));
  r.scores[static_cast<std::size_t>(ImageIssue::odd_aspect_ratio)] =
      longer > 0 ? shorter / longer : 1.0;
  const bool compare = can_compare();
  if (compare && median_area() > 0 && area(image) > 0) {
    const double ratio = std::sqrt(static_cast<double>(area(image)) / median_area());
    r.scores[static_cast<std::size_t>(ImageIssue::odd_size)] = std::min(ratio, 1.0 / ratio);
  }
  for (ImageIssue issue : store::kAllImageIssues) {
    const std::optional<double> score = r.score(issue);
    r.issues[static_cast<std::size_t>(issue)] = score && *score < policy_.threshold(issue);
  }
  const bool colour_set = compare && static_cast<double>(colour_) >=
                                         policy_.colour_set_share * static_cast<double>(images_);
  if (!colour_set) r.issues[static_cast<std::size_t>(ImageIssue::grayscale)] = false;
  return r;
}

std::string image_issues_reason(const std::string& path, const store::ImageQualityRecord& record,
                                const ImageIssuePolicy& policy) {
  std::string issues;
  for (ImageIssue issue : store::kAllImageIssues) {
    if (!record.has(issue)) continue;
    if (!issues.empty()) issues += ", ";
    issues += fmt::format("{} (score {:.3f} < {})", to_string(issue),
                          record.score(issue).value_or(0.0), policy.threshold(issue));
  }
  return fmt::format("image '{}' has image-quality issues: {} (image_issues=reject)",
                     printable_text(path, 240), issues);
}

}  // namespace winnow::curation::judge
