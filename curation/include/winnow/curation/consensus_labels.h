// Consensus labels: the Dawid-Skene estimate of every annotated sample's true
// label from all the annotations in the store (report/dawid_skene.h). Each
// annotator's confusion matrix is estimated from the whole dataset, so a
// sample labelled by a reliable and an unreliable annotator who disagree gets
// the reliable one's label, where a majority vote would have to break a tie.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "winnow/curation/report/dawid_skene.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation {

struct SampleConsensus {
  std::int64_t label = 0;    // the store's label value
  double posterior = 0.0;    // Dawid-Skene posterior of that label
  std::size_t annotations = 0;
};

struct ConsensusLabels {
  std::unordered_map<std::int64_t, SampleConsensus> by_sample;  // annotated samples only
  std::size_t annotators = 0;
  std::size_t classes = 0;
  int iterations = 0;
  bool converged = false;
};

// Every annotation in `store` (an annotation without an annotator counts as
// one "unknown" annotator). Empty when the store has no annotations.
ConsensusLabels consensus_labels(MetadataStore& store, const DawidSkeneOptions& options = {});

}  // namespace winnow::curation
