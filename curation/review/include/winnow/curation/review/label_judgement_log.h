// When each sample's label was last judged, as the number of labelled samples
// (the voters of label quality) the dataset had then: the bookkeeping of
// incremental re-judging (docs/curation.md, "Label quality", its part
// "Re-judging as the dataset grows").
//
// A sample judged at arrival saw only the samples before it; the dataset keeps
// growing, so after each batch the pipeline judges again, in each range of
// samples,
//   - the doubtful samples (label issues, and labels with less than half of
//     their neighbours' weight) once the dataset has grown a factor
//     (1 + growth)^(1/4) since they were judged,
//   - the unsure samples (labels with less than nine tenths of their
//     neighbours' weight) after (1 + growth)^3,
//   - every sample after (1 + growth)^6, or as soon as the dataset has grown
//     at all when they were judged against fewer than `whole_below` (a verdict
//     over so few samples says little).
// So a verdict is at most (1 + growth)^(1/4), (1 + growth)^3 or (1 + growth)^6 of
// growth old, by how sure it was, and whether a label is flagged no longer
// depends on whether it came early or late. Kept as ranges of sample ids (a
// chunk of ingest is one range), so the log stays a few dozen entries
// whatever the dataset's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace winnow::curation::review {

struct JudgedRange {
  std::int64_t first_id = 0;
  std::int64_t last_id = 0;  // inclusive
  // Labelled samples the dataset had when the range's doubtful samples were
  // last judged, its unsure ones, and all of them
  // (all_voters <= unsure_voters <= voters).
  std::int64_t voters = 0;
  std::int64_t unsure_voters = 0;
  std::int64_t all_voters = 0;
};

// Which samples of a range are due (LabelJudgementLog::due): each tier holds
// the ones before it.
enum class DueTier { doubtful, unsure, all };

struct DueRange {
  JudgedRange range;
  DueTier tier = DueTier::doubtful;
  // When the samples of this tier were last judged (the tier's count).
  std::int64_t judged_against() const;
};

class LabelJudgementLog {
 public:
  static constexpr const char* kMetaKey = "curation.label_judgements";  // its key in meta
  // Growth steps (factors of 1 + growth) after which a doubtful verdict, an
  // unsure one and any verdict are due. The doubtful are the candidates for a
  // flag, so they are kept the freshest.
  static constexpr double kDoubtfulGrowthSteps = 0.25;
  static constexpr double kUnsureGrowthSteps = 3;
  static constexpr double kConfidentGrowthSteps = 6;

  LabelJudgementLog() = default;
  // Throws winnow::Error naming what is wrong (not JSON, a bad range,
  // ranges out of order or overlapping). Entries of four numbers (written
  // before the unsure tier) read as unsure_voters = all_voters.
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

}  // namespace winnow::curation::review
