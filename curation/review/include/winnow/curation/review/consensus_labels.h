// Consensus labels: the Dawid-Skene estimate of every annotated sample's true
// label from all the annotations in the store (report/dawid_skene.h). Each
// annotator's confusion matrix is estimated from the whole dataset, so a
// sample labelled by a reliable and an unreliable annotator who disagree gets
// the reliable one's label, where a majority vote would have to break a tie.
//
// A duplicate (exact or near) shows the same image as its original, so the
// duplicate's annotations count as more opinions on the original: the
// consensus is taken per original, over its annotations and its duplicates'.
// Duplicates get no consensus of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/curation/review/consensus_estimates.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation::review {

struct SampleConsensus {
  std::int64_t label = 0;       // the store's label value
  double posterior = 0.0;       // Dawid-Skene posterior of that label
  std::size_t annotations = 0;  // the sample's and its duplicates' annotations (not extra votes)
  std::size_t duplicate_annotations = 0;  // of those, its duplicates'
  std::size_t extra_votes = 0;            // votes of extra voters it took
  // The label most of those annotations give, the consensus's on a tie: what
  // the annotators said, before any model of them. The neighbours vote with
  // it in the consensus (docs/cli.md, rejudge --consensus).
  std::int64_t majority = 0;
};

// One more annotator that is not in the store, e.g. a classifier: its label
// (a store label value) for some samples.
struct ExtraVoter {
  std::string name;
  std::unordered_map<std::int64_t, std::int64_t> votes;  // sample id -> label value
};

struct ConsensusLabels {
  std::unordered_map<std::int64_t, SampleConsensus> by_sample;  // annotated originals only
  std::size_t duplicate_annotations =
      0;                               // annotations counted for an original, not their own sample
  std::size_t annotators = 0;          // extra voters included
  std::vector<double> extra_accuracy;  // per extra voter: expected accuracy (Dawid-Skene)
  std::vector<std::size_t> extra_votes;  // per extra voter: votes counted
  // The store's annotators as this consensus estimates them, by contributor
  // id (-1: annotations without an annotator): expected accuracy.
  std::map<std::int64_t, double> annotator_accuracy;
  AnnotationsFingerprint annotations_read;  // the rows it was taken over
  std::size_t classes = 0;
  int iterations = 0;
  bool converged = false;
};

// How many nearest labelled samples make the neighbours' vote in the
// consensus: kConsensusNeighbours, or the label check's k when smaller (the
// search behind both finds label_k). The label check wants a wide view to
// say "few agree"; the consensus voter names one label, which the nearest
// judge best.
inline constexpr int kConsensusNeighbours = 30;
int consensus_neighbours(int label_k);

// Every annotation in `store` (an annotation without an annotator counts as
// one "unknown" annotator), a duplicate's for its original. Empty when the
// store has no annotations.
//
// `extra` adds annotators that are not in the store, such as the label a
// sample's nearest neighbours suggest. Each one's confusion matrix is
// estimated like any annotator's, so its votes weigh what they are worth per
// class (this is how CROWDLAB, in cleanlab, combines a classifier with
// annotators). Only samples with annotations take extra votes.
//
// consensus_options() are the consensus's Dawid-Skene options: a diagonal
// prior of kConsensusDiagonalPrior pseudo-answers per class, so that an
// annotator asked mostly about hard items is not read as their class.
inline constexpr double kConsensusDiagonalPrior = 10.0;
labels::DawidSkeneOptions consensus_options();
ConsensusLabels consensus_labels(store::MetadataStore& store,
                                 const labels::DawidSkeneOptions& options = consensus_options(),
                                 const std::vector<ExtraVoter>& extra = {});

}  // namespace winnow::curation::review
