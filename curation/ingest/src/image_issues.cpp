#include "winnow/curation/ingest/image_issues.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "winnow/curation/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation::ingest {

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

const char* to_string(ImageIssuePolicy::Action action) {
  return action == ImageIssuePolicy::Action::reject ? "reject" : "flag";
}

ImageIssuePolicy::Action parse_image_issue_action(const std::string& text) {
  if (text == "flag") return ImageIssuePolicy::Action::flag;
  if (text == "reject") return ImageIssuePolicy::Action::reject;
  WINNOW_THROW("image issue action '{}' is not flag or reject", printable_text(text, 80));
}

json ImageIssuePolicy::to_json() const {
  json limits = json::object();
  for (ImageIssue issue : store::kAllImageIssues) limits[to_string(issue)] = threshold(issue);
  return {{"action", to_string(action)},
          {"thresholds", limits},
          {"colour_set_share", colour_set_share},
          {"min_reference_images", min_reference_images}};
}

ImageIssuePolicy ImageIssuePolicy::from_json(const json& j) {
  WINNOW_THROW_IF_NOT(j.is_object(), "image_issues must be a JSON object, got {}", j.type_name());
  ImageIssuePolicy p;
  try {
    if (j.contains("action"))
      p.action = parse_image_issue_action(j.at("action").get<std::string>());
    if (j.contains("thresholds")) {
      for (const auto& [name, value] : j.at("thresholds").items()) {
        const auto* issue =
            std::find_if(store::kAllImageIssues.begin(), store::kAllImageIssues.end(),
                         [&, n = name](ImageIssue i) { return n == to_string(i); });
        WINNOW_THROW_IF_NOT(issue != store::kAllImageIssues.end(),
                            "image_issues.thresholds: '{}' is not an image issue",
                            printable_text(name, 80));
        p.thresholds[static_cast<std::size_t>(*issue)] = value.get<double>();
      }
    }
    if (j.contains("colour_set_share")) j.at("colour_set_share").get_to(p.colour_set_share);
    if (j.contains("min_reference_images")) {
      j.at("min_reference_images").get_to(p.min_reference_images);
    }
  } catch (const json::exception& e) {
    WINNOW_THROW("image_issues: a field has the wrong type: {}", e.what());
  }
  p.validate();
  return p;
}

void ImageIssuePolicy::validate() const {
  for (ImageIssue issue : store::kAllImageIssues) {
    const double t = threshold(issue);
    WINNOW_THROW_IF_NOT(std::isfinite(t) && t >= 0.0 && t <= 1.0,
                        "image issue threshold {}={} must be in [0, 1] (0: never an issue)",
                        to_string(issue), t);
  }
  WINNOW_THROW_IF_NOT(
      std::isfinite(colour_set_share) && colour_set_share >= 0.0 && colour_set_share <= 1.0,
      "image_issues colour_set_share={} must be in [0, 1]", colour_set_share);
  WINNOW_THROW_IF_NOT(min_reference_images >= 1,
                      "image_issues min_reference_images={} must be >= 1", min_reference_images);
}

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

}  // namespace winnow::curation::ingest
