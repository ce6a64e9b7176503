// Label quality from the labels of the k nearest accepted neighbours.
//
// quality = sum of w_i over neighbours whose label equals the sample's label
//           / sum of w_i over all labelled neighbours,
// with w_i = (max(cosine_i, 0) + 1e-6) / max(d_i, median_j d_j / 4, 1e-6),
// d_i = 1 - cosine_i (weighted kNN agreement, in [0, 1]). Where neighbours
// are close (cosines near 1, as for pixels) the weight is the inverse
// distance: a neighbour twice as close counts twice; where they are far (text)
// the cosine adds its own contrast. The cap keeps a single near copy from
// outvoting the rest: no neighbour counts more than about four median ones.
// A sample is flagged as a likely label issue when
// quality < flag_below. With no labelled neighbour, quality is 1 and the
// sample is not flagged (nothing contradicts it). The suggested label is the
// label with the largest weight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "winnow/index/vector_index.h"

namespace winnow::curation::labels {

// Defaults: the dataset's (CurationConfig::label_k, label_flag_below), chosen
// on Fashion-MNIST streams through the CLI (docs/curation.md, "Label quality";
// the figures: docs/benchmarks.md, "kNN vote").
struct LabelQualityOptions {
  int k = 50;
  double flag_below = 0.08;
};

// A neighbour's weight in the vote, from its cosine and the median cosine
// distance of the neighbours voting (see the top of this file).
double neighbour_weight(double cosine, double median_distance);

struct LabelQualityResult {
  double quality = 1.0;
  bool flagged = false;
  std::size_t neighbours = 0;          // labelled neighbours used
  std::optional<int> suggested_label;  // heaviest neighbour label
  double suggested_share = 0.0;        // its share of the neighbours' weight
  // Thresholds used, reported with the decision.
  int k = 0;
  double flag_below = 0.0;
};

// Integer class of an accepted sample by id; nullopt when it has none.
using LabelLookup = std::function<std::optional<int>(std::int64_t id)>;

class LabelQuality {
 public:
  explicit LabelQuality(LabelQualityOptions options = {});

  // Scores `label` against row `query` of a search already made, skipping the
  // id `exclude` (the sample itself when it is already in the index) and
  // using at most options.k neighbours.
  LabelQualityResult score(const index::SearchResults& results, std::size_t query, int label,
                           const LabelLookup& labels, std::int64_t exclude = -1) const;

  // Searches `index` for `embedding` (k, or k + 1 when exclude >= 0) and scores.
  LabelQualityResult score(const index::VectorIndex& index, const float* embedding, int label,
                           const LabelLookup& labels, std::int64_t exclude = -1) const;

  const LabelQualityOptions& options() const { return options_; }

 private:
  LabelQualityOptions options_;
};

}  // namespace winnow::curation::labels
