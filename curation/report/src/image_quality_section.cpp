#include "image_quality_section.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "winnow/store/image_quality_table.h"

namespace winnow::curation::report {

namespace {

using nlohmann::json;
using store::ImageIssue;

// How many images a group has, how many with any issue, and with each.
struct IssueTally {
  std::int64_t images = 0;
  std::int64_t with_issues = 0;
  std::array<std::int64_t, store::kImageIssueCount> issues{};

  void add(const store::ImageQualityRecord& record) {
    ++images;
    if (record.any_issue()) ++with_issues;
    for (std::size_t i = 0; i < store::kImageIssueCount; ++i) issues[i] += record.issues[i] ? 1 : 0;
  }
  double share(std::int64_t count) const {
    return images > 0 ? static_cast<double>(count) / static_cast<double>(images) : 0.0;
  }
};

// images, with_issues, share_with_issues and the issues, worst first.
json tally_json(const IssueTally& t) {
  std::vector<std::size_t> order(store::kImageIssueCount);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.issues[a] > t.issues[b]; });
  json issues = json::array();
  for (std::size_t i : order) {
    issues.push_back({{"issue", to_string(store::kAllImageIssues[i])},
                      {"count", t.issues[i]},
                      {"share", t.share(t.issues[i])}});
  }
  return {{"images", t.images},
          {"with_issues", t.with_issues},
          {"share_with_issues", t.share(t.with_issues)},
          {"issues", issues}};
}

// One row per group, the largest share of images with issues first (then by name).
json groups_json(const std::map<std::string, IssueTally>& groups) {
  std::vector<const std::pair<const std::string, IssueTally>*> order;
  for (const auto& group : groups) order.push_back(&group);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.share(a->second.with_issues) > b->second.share(b->second.with_issues);
  });
  json rows = json::array();
  for (const auto* group : order) {
    json row = {{"name", group->first}};
    row.update(tally_json(group->second));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

json image_quality_json(store::MetadataStore& store, const LabelNames& names) {
  IssueTally all;
  std::map<std::string, IssueTally> sources;
  std::map<std::string, IssueTally> classes;
  store::ImageQualityTable(store.database())
      .for_each([&](const store::ImageQualityTable::Row& row) {
        all.add(row.record);
        sources[row.source.empty() ? "(unknown)" : row.source].add(row.record);
        classes[row.label ? names.name_of(*row.label) : "(unlabelled)"].add(row.record);
      });
  json section = tally_json(all);
  section["sources"] = groups_json(sources);
  section["classes"] = groups_json(classes);
  return section;
}

}  // namespace winnow::curation::report
