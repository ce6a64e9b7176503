// When each sample's label was last judged, as the number of labelled samples
// (the voters of label quality) the dataset had then: the bookkeeping of
// incremental re-judging (docs/curation.md, "Label quality").
//
// A sample judged at arrival saw only the samples before it; the dataset keeps
// growing, so after each batch the pipeline judges again the samples judged
// against fewer than voters_now / (1 + growth) voters. Each sample is then
// re-judged about log(N / n) / log(1 + growth) times as the dataset grows from
// n to N, every verdict is at most a factor (1 + growth) of growth old, and
// whether a label is flagged no longer depends on whether it came early or
// late. Kept as ranges of sample ids (a chunk of ingest is one range), so the
// log stays a few dozen entries whatever the dataset's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace winnow::curation::ingest {

struct JudgedRange {
  std::int64_t first_id = 0;
  std::int64_t last_id = 0;  // inclusive
  std::int64_t voters = 0;   // labelled samples the dataset had when they were judged
};

class LabelJudgementLog {
 public:
  static constexpr const char* kMetaKey = "curation.label_judgements";  // its key in meta

  LabelJudgementLog() = default;
  // Throws winnow::Error naming what is wrong (not JSON, a bad range,
  // ranges out of order or overlapping).
  static LabelJudgementLog from_json(const std::string& text);
  std::string to_json() const;

  // Samples first_id..last_id were judged against `voters` labelled samples;
  // ids must follow every range already logged.
  void add(std::int64_t first_id, std::int64_t last_id, std::int64_t voters);
  // The ranges judged against fewer than voters_now / (1 + growth) voters.
  std::vector<JudgedRange> stale(std::int64_t voters_now, double growth) const;
  // Marks those ranges judged against voters_now, then merges neighbouring
  // ranges judged within a factor (1 + growth / 8) of each other under the
  // smaller count (a merged range is re-judged a little early, never late).
  void rejudged(std::int64_t voters_now, double growth);

  const std::vector<JudgedRange>& ranges() const { return ranges_; }

 private:
  std::vector<JudgedRange> ranges_;  // by id, disjoint
};

}  // namespace winnow::curation::ingest
