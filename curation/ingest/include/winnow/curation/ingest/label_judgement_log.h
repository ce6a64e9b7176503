// When each sample's label was last judged, as the number of labelled samples
// (the voters of label quality) the dataset had then: the bookkeeping of
// incremental re-judging (docs/curation.md, "Label quality").
//
// A sample judged at arrival saw only the samples before it; the dataset keeps
// growing, so after each batch the pipeline judges again
//   - the doubtful samples (label issues, and labels with less than half of
//     their neighbours' weight) of every range judged against fewer than
//     voters_now / (1 + growth) labelled samples, and
//   - every sample of a range whose samples were all last judged against
//     fewer than voters_now / (1 + growth)^3, or against fewer than
//     `whole_below` (a verdict over so few samples says little).
// So a doubtful verdict is at most a factor 1 + growth of growth old, any
// verdict at most (1 + growth)^3, and whether a label is flagged no longer
// depends on whether it came early or late. Kept as ranges of sample ids (a
// chunk of ingest is one range), so the log stays a few dozen entries
// whatever the dataset's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace winnow::curation::ingest {

struct JudgedRange {
  std::int64_t first_id = 0;
  std::int64_t last_id = 0;  // inclusive
  // Labelled samples the dataset had when the range's doubtful samples were
  // last judged, and when all of them were (all_voters <= voters).
  std::int64_t voters = 0;
  std::int64_t all_voters = 0;
};

// What is due in a range (LabelJudgementLog::due).
struct DueRange {
  JudgedRange range;
  bool whole = false;  // every sample; else the doubtful ones
};

class LabelJudgementLog {
 public:
  static constexpr const char* kMetaKey = "curation.label_judgements";  // its key in meta
  // A confident verdict is due after this many growth steps of the doubtful.
  static constexpr int kConfidentGrowthSteps = 3;

  LabelJudgementLog() = default;
  // Throws winnow::Error naming what is wrong (not JSON, a bad range,
  // ranges out of order or overlapping).
  static LabelJudgementLog from_json(const std::string& text);
  std::string to_json() const;

  // Samples first_id..last_id were all judged against `voters` labelled
  // samples; ids must follow every range already logged.
  void add(std::int64_t first_id, std::int64_t last_id, std::int64_t voters);
  // The ranges with something due at voters_now (see the top of this file).
  std::vector<DueRange> due(std::int64_t voters_now, double growth, std::int64_t whole_below) const;
  // Marks what due() returns as judged against voters_now, then merges
  // neighbouring ranges whose counts are within a factor (1 + growth / 8) of
  // each other under the smaller counts (a merged range is re-judged a little
  // early, never late).
  void rejudged(std::int64_t voters_now, double growth, std::int64_t whole_below);

  const std::vector<JudgedRange>& ranges() const { return ranges_; }

 private:
  std::vector<JudgedRange> ranges_;  // by id, disjoint
};

}  // namespace winnow::curation::ingest
