// The pipeline's in-memory view of the labels of the samples that vote in
// label quality (accepted and label_issue samples with a vector), read from
// the store at open and kept in step as samples are accepted or flagged.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace winnow::curation {

// Sample id -> label of the accepted, labelled samples. Store ids are dense
// rowids, so this is a vector indexed by id rather than a hash map: label
// quality looks up k neighbours per ingested sample, and a hash map's cache
// misses showed in the ingest time.
class AcceptedLabels {
 public:
  // Throws winnow::Error for a negative id.
  void set(std::int64_t id, int label);
  std::optional<int> find(std::int64_t id) const;
  void erase(std::int64_t id);
  void clear() { labels_.clear(), size_ = 0; }
  std::size_t size() const { return size_; }  // ids with a label

 private:
  static constexpr int kNone = std::numeric_limits<int>::min();
  std::vector<int> labels_;  // kNone: not accepted, or no label
  std::size_t size_ = 0;
};

// The labels of the samples that vote in label quality and how many accepted
// samples carry each label (a label's support, which label quality needs
// before it flags). A label_issue sample keeps its vote: a flag is a
// suspicion, and leaving flagged samples out of the vote made the flags feed
// on themselves (confusable classes lost their agreeing neighbours, and
// precision fell; docs/curation.md, "Label quality").
struct AcceptedLabelCache {
  AcceptedLabels accepted;                                // id -> label (labelled only)
  AcceptedLabels flagged;                                 // label_issue samples: id -> label
  std::unordered_map<std::int64_t, std::int64_t> counts;  // accepted samples per label

  // The label a neighbour votes with: an accepted or a flagged sample's.
  std::optional<int> voter_label(std::int64_t id) const {
    if (std::optional<int> label = accepted.find(id)) return label;
    return flagged.find(id);
  }
  // Whether a sample of the index is a label issue (else accepted).
  bool label_issue(std::int64_t id) const { return flagged.find(id).has_value(); }
  // Samples that vote: what "the dataset's size" means for re-judging.
  std::size_t voters() const { return accepted.size() + flagged.size(); }
  // An accepted sample becomes a label issue, or a label issue is cleared.
  void flag(std::int64_t id);
  void clear_flag(std::int64_t id);
  // A judged sample became a duplicate: it votes no more.
  void forget(std::int64_t id);
};

}  // namespace winnow::curation
