#include "winnow/curation/ingest/rejection_summary.h"

#include <algorithm>
#include <cctype>

namespace winnow::curation::ingest {

std::string rejection_pattern(std::string_view reason, std::string_view key) {
  std::string out;
  out.reserve(reason.size());
  for (std::size_t i = 0; i < reason.size();) {
    if (!key.empty() && reason.compare(i, key.size(), key) == 0) {
      out += "<key>";
      i += key.size();
    } else if (std::isdigit(static_cast<unsigned char>(reason[i]))) {
      out += 'N';
      while (i < reason.size() && std::isdigit(static_cast<unsigned char>(reason[i]))) ++i;
    } else {
      out += reason[i++];
    }
  }
  return out;
}

void RejectionSummary::add(const std::string& reason, const std::string& key, std::size_t line) {
  const std::string pattern = rejection_pattern(reason, key);
  const auto found = by_pattern_.find(pattern);
  if (found != by_pattern_.end()) {
    ++groups_[found->second].count;
    return;
  }
  if (groups_.size() >= kMaxGroups) {
    ++other_;  // a hostile manifest cannot grow this without bound
    return;
  }
  by_pattern_.emplace(pattern, groups_.size());
  groups_.push_back({reason, 1, key, line});
}

std::vector<RejectionGroup> RejectionSummary::groups() const {
  std::vector<RejectionGroup> sorted = groups_;
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const RejectionGroup& a, const RejectionGroup& b) { return a.count > b.count; });
  return sorted;
}

void put_rejections(nlohmann::json& out, const std::vector<RejectionGroup>& groups,
                    std::int64_t rejected, std::size_t top) {
  if (groups.empty()) return;
  nlohmann::json shown = nlohmann::json::array();
  std::int64_t shown_count = 0;
  for (std::size_t i = 0; i < groups.size() && i < top; ++i) {
    shown.push_back({{"reason", groups[i].reason},
                     {"count", groups[i].count},
                     {"example_key", groups[i].example_key},
                     {"example_line", groups[i].example_line}});
    shown_count += groups[i].count;
  }
  out["rejections"] = std::move(shown);
  if (rejected > shown_count) out["rejections_not_shown"] = rejected - shown_count;
}

}  // namespace winnow::curation::ingest
