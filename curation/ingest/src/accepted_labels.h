// The pipeline's in-memory view of the accepted samples' labels, read from
// the store at open and kept in step as samples are accepted or flagged.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace winnow::curation::ingest {

// Sample id -> label of the accepted, labelled samples. Store ids are dense
// rowids, so this is a vector indexed by id rather than a hash map: label
// quality looks up k neighbours per ingested sample, and the hash map's
// cache misses were 5% of the ingest time.
class AcceptedLabels {
 public:
  // Throws winnow::Error for a negative id.
  void set(std::int64_t id, int label);
  std::optional<int> find(std::int64_t id) const;
  void erase(std::int64_t id);
  void clear() { labels_.clear(); }

 private:
  static constexpr int kNone = std::numeric_limits<int>::min();
  std::vector<int> labels_;  // kNone: not accepted, or no label
};

// The labels of the accepted samples and how many accepted samples carry
// each label (a label's support, which label quality needs before it flags).
struct AcceptedLabelCache {
  AcceptedLabels accepted;                                // id -> label (labelled only)
  std::unordered_map<std::int64_t, std::int64_t> counts;  // accepted samples per label
};

}  // namespace winnow::curation::ingest
