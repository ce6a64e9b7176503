// RejectionSummary: a batch's rejections grouped by reason, so that a summary
// can say why records were refused: the most frequent reasons, each with its
// count and one example key. Reasons that differ only in numbers or in the
// record's own key ("line 7: ...", "pixels[3] ...") fall into one group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace winnow::curation::ingest {

struct RejectionGroup {
  std::string reason;  // the first reason of the group, as stored
  std::int64_t count = 0;
  std::string example_key;  // the key of that first record ("" when it had none)
  std::size_t example_line = 0;
};

class RejectionSummary {
 public:
  // Distinct groups kept; rejections beyond them count in other_count().
  static constexpr std::size_t kMaxGroups = 256;

  void add(const std::string& reason, const std::string& key, std::size_t line);
  // Most frequent first; ties in order of first appearance.
  std::vector<RejectionGroup> groups() const;
  std::int64_t other_count() const { return other_; }

 private:
  std::unordered_map<std::string, std::size_t> by_pattern_;
  std::vector<RejectionGroup> groups_;
  std::int64_t other_ = 0;
};

// The grouping key of a reason: the record's key replaced by <key>, every run
// of digits by N.
std::string rejection_pattern(std::string_view reason, std::string_view key);

// Adds to `out` "rejections": the first `top` groups as [{"reason", "count",
// "example_key", "example_line"}...], and "rejections_not_shown": how many of the
// batch's `rejected` records they leave out, when any. Nothing when no group.
void put_rejections(nlohmann::json& out, const std::vector<RejectionGroup>& groups,
                    std::int64_t rejected, std::size_t top = 5);

}  // namespace winnow::curation::ingest
