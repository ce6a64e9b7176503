#include "winnow/curation/config/image_issue_policy.h"

#include <algorithm>
#include <cmath>

#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation {

using nlohmann::json;
using store::ImageIssue;

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

}  // namespace winnow::curation
