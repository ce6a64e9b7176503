// Whether the kNN label vote can judge a class on this dataset.
//
// The vote is only as good as the embedder: where the neighbours of a class
// carry its label hardly more often than chance, a low label quality says
// nothing, and flagging on it marks good samples by the hundred (clip art
// under a pixel embedder). So the check first measures, from the label
// qualities of the judged samples, how far the vote beats chance:
//
//   agreement(c) = mean label quality of the judged samples labelled c
//   chance(c)    = share of c among the judged samples (what a random
//                  neighbour's label agrees with)
//   lift(c)      = (agreement(c) - chance(c)) / (1 - chance(c))
//   lift         = sum_c n_c (agreement(c) - chance(c)) / sum_c n_c (1 - chance(c))
//
// lift is 0 for neighbours no better than chance and 1 when every neighbour
// agrees (the dataset's lift is Cohen's kappa of sample and neighbour
// labels). The vote judges class c when it has at least min_samples judged
// samples, lift(c) >= min_lift and the dataset's lift >= min_lift; elsewhere
// it abstains: it flags no sample of c. Definitions: docs/curation.md, "When
// the label check abstains".
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace winnow::curation::labels {

struct LabelEvidenceOptions {
  double min_lift = 0.25;
  std::int64_t min_samples = 30;
};

struct ClassEvidence {
  std::int64_t label = 0;
  std::int64_t samples = 0;  // judged samples with this label
  double agreement = 0.0;
  double chance = 0.0;
  double lift = 0.0;
  bool judged = false;  // the vote may flag samples of this class
};

class LabelEvidence {
 public:
  // Throws winnow::Error for min_lift outside [0, 1] or min_samples < 1.
  explicit LabelEvidence(LabelEvidenceOptions options = {});

  // `samples` judged samples of `label` whose label qualities sum to
  // `quality_sum` (each quality in [0, 1]).
  void add(std::int64_t label, std::int64_t samples, double quality_sum);
  void add(std::int64_t label, double quality) { add(label, 1, quality); }

  std::int64_t samples() const { return samples_; }
  double lift() const;  // the dataset's; 0 with no sample
  ClassEvidence of(std::int64_t label) const;
  bool judges(std::int64_t label) const { return of(label).judged; }
  // Every class with a judged sample, by label.
  std::vector<ClassEvidence> classes() const;
  // Those the vote abstains on.
  std::vector<ClassEvidence> abstained() const;

  const LabelEvidenceOptions& options() const { return options_; }

 private:
  struct Sums {
    std::int64_t samples = 0;
    double quality = 0.0;
  };
  LabelEvidenceOptions options_;
  std::map<std::int64_t, Sums> by_label_;
  std::int64_t samples_ = 0;
  double quality_ = 0.0;         // sum over every judged sample
  double squared_counts_ = 0.0;  // sum_c n_c^2, for the chance of the whole set
};

}  // namespace winnow::curation::labels
