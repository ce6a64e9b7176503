// Label health in the style of cleanlab's dataset health summary: for every
// judged labelled sample, its given label (what the store holds) against its
// estimated true label (the annotators' consensus, or the label the neighbour
// vote suggested, or the given label itself). From the K x K count matrix of
// (given, estimated) pairs come the per-class table (label issues, inverse
// label issues, label noise, inverse label noise, label quality score), the
// most confused class pairs and the overall health score. Definitions:
// docs/report-schema.md (`classes`, `confused_pairs`, `health_score`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace winnow::curation::labels {

struct ClassHealth {
  std::size_t label = 0;                      // class index
  std::int64_t given = 0;                     // samples with given label = this class
  std::int64_t estimated = 0;                 // samples with estimated true label = this class
  std::int64_t label_issues = 0;              // given here, estimated elsewhere
  std::int64_t inverse_label_issues = 0;      // estimated here, given elsewhere
  std::optional<double> label_noise;          // label_issues / given
  std::optional<double> inverse_label_noise;  // inverse_label_issues / estimated
  std::optional<double> label_quality_score;  // 1 - label_noise
  std::optional<double> mean_label_quality;   // of the stored per-sample scores
  std::string label_noise_note;               // why label_noise (and the score) is empty
  std::string inverse_label_noise_note;
  std::string mean_label_quality_note;
};

struct ConfusedPair {
  std::size_t a = 0;  // class indices, a < b
  std::size_t b = 0;
  std::int64_t count = 0;          // samples with {given, estimated} = {a, b}
  double joint_probability = 0.0;  // count / judged samples
};

struct LabelHealth {
  std::int64_t samples = 0;            // judged labelled samples (N)
  std::int64_t label_issues = 0;       // samples whose given label differs from the estimate
  std::optional<double> health_score;  // 1 - label_issues / N
  std::string health_score_note;
  std::vector<ClassHealth> classes;          // ascending label_quality_score, undefined ones last
  std::vector<ConfusedPair> confused_pairs;  // descending count
  std::vector<std::int64_t> counts;          // [given][estimated], K x K
};

// Accumulates (given, estimated) pairs one sample at a time, so a million
// samples need only the K x K matrix.
class LabelHealthCounter {
 public:
  explicit LabelHealthCounter(std::size_t classes);

  // Both labels are class indices < classes (throws winnow::Error otherwise);
  // `quality` is the sample's stored label-quality score, if any.
  void add(std::size_t given, std::size_t estimated, std::optional<double> quality);

  // The table; classes with the same score keep their index order. Pairs
  // with equal counts are ordered by `pair_order` ascending (a, then b) when
  // given, e.g. to sort by label name; at most `max_pairs` pairs.
  LabelHealth finish(std::size_t max_pairs = 20,
                     const std::vector<std::size_t>& pair_order = {}) const;

 private:
  std::size_t classes_;
  std::vector<std::int64_t> counts_;  // [given][estimated]
  std::vector<double> quality_sum_;   // per given class
  std::vector<std::int64_t> quality_count_;
};

}  // namespace winnow::curation::labels
