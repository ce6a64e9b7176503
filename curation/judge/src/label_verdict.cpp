#include "winnow/curation/judge/label_verdict.h"

#include <fmt/format.h>

namespace winnow::curation::judge {

nlohmann::json label_quality_details(const labels::LabelQualityResult& q, std::int64_t support,
                                     int min_label_neighbours, const std::string& suggested) {
  nlohmann::json details = {{"quality", q.quality},
                            {"neighbours", q.neighbours},
                            {"k", q.k},
                            {"flag_below", q.flag_below},
                            {"min_neighbours", min_label_neighbours},
                            {"label_support", support}};
  if (q.suggested_label) {
    details["suggested_label"] = suggested;
    details["suggested_share"] = q.suggested_share;
  }
  return details;
}

std::string label_quality_why(const labels::LabelQualityResult& q, bool flagged) {
  return fmt::format("label quality {:.3f} {} {} over {} neighbours", q.quality,
                     flagged ? "<" : ">=", q.flag_below, q.neighbours);
}

std::string abstained_label_why(const labels::LabelQualityResult& q, double class_lift,
                                double min_lift) {
  return fmt::format(
      "the label check abstains on this class (lift {:.3f} < {}), where label quality {:.3f} < "
      "{} over {} neighbours would flag it",
      class_lift, min_lift, q.quality, q.flag_below, q.neighbours);
}

store::Decision changed_label_decision(bool flagged, const std::string& why,
                                       const std::string& suggested, const std::string& suffix,
                                       const nlohmann::json& details) {
  if (flagged) {
    return {store::SampleStatus::label_issue, std::nullopt,
            fmt::format("{} (suggested {}) {}", why, suggested, suffix), details.dump()};
  }
  return {store::SampleStatus::accepted, std::nullopt,
          fmt::format("label issue cleared: {} {}", why, suffix), details.dump()};
}

}  // namespace winnow::curation::judge
