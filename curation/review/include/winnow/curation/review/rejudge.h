// rejudge: redo, against today's dataset, what ingest decided against the
// dataset as it was when each sample arrived (`winnow rejudge`; the steps are
// described in rejudge.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/dataset/dataset.h"

namespace winnow::curation::review {

// What `rejudge` redoes, beyond the gains of accepted samples (which it
// always recomputes against the final index).
struct RejudgeOptions {
  // Re-embed every stored accepted and label_issue sample from its stored
  // content with this embedder spec, rebuild the index from the new vectors,
  // and make it the dataset's embedder (later batches use it). Implies labels.
  std::optional<std::string> embedder;
  // With embedder: the index cosine below which a near-duplicate candidate is
  // not verified (config min_candidate_similarity), since cosines mean
  // something else in the new embedding. Unset: kept.
  std::optional<double> min_candidate_similarity;
  // The same for text records (config text_min_candidate_similarity).
  std::optional<double> text_min_candidate_similarity;
  // Re-judge the label quality of every stored accepted and label_issue
  // sample against today's accepted neighbours (leave-one-out): accepted ->
  // label_issue when flagged, kNN label_issue -> accepted when no longer
  // flagged. Confident learning's flags are left as they are.
  bool labels = false;
  // Before re-judging (implies labels): every stored accepted and label_issue
  // sample with annotations gets the Dawid-Skene consensus of all the
  // dataset's annotations as its label (consensus_labels.h), with a relabel
  // event naming the label it replaces. The consensus is taken twice: over
  // the annotations, then with the label each sample's neighbours suggest
  // (under the first consensus) as one more annotator's vote. An annotated
  // sample is then judged by its consensus posterior: flagged below
  // consensus_flag_below, accepted at or above it. Samples without
  // annotations are judged by label quality as with labels alone.
  bool consensus = false;
  double consensus_flag_below = 0.7;
  // The label quality below which this re-judgement flags a label (unset:
  // the dataset's label_flag_below). Not stored: later batches keep the
  // dataset's threshold.
  std::optional<double> flag_below;
  // Re-judge the samples a person reviewed (verdicts.h) too: their label and
  // status may change. Unset, they stay as the person left them.
  bool override_reviews = false;
  // Called after each chunk of the long searches, with the stage's name
  // ("label neighbours", "gain neighbours"), samples done and the stage's
  // total: for a progress line. Unset: nothing is called.
  using Progress =
      std::function<void(const std::string& stage, std::size_t done, std::size_t total)>;
  Progress progress;
};

struct RejudgeReport {
  std::string embedder;           // the dataset's embedder afterwards
  std::string previous_embedder;  // before (equal unless re-embedded)
  std::size_t re_embedded = 0;
  std::size_t relabelled = 0;             // consensus label differed from the stored one
  std::size_t duplicate_annotations = 0;  // duplicates' annotations counted for their originals
  // With consensus: the neighbours' voters (by agreement), their votes and
  // expected accuracy as Dawid-Skene estimated it.
  struct NeighbourVoter {
    std::string name;
    std::size_t votes = 0;
    double accuracy = 0.0;
  };
  std::vector<NeighbourVoter> neighbour_voters;
  // With consensus and a training run's predictions imported: its voter
  // (review::training_voter), its votes and expected accuracy; votes 0: none.
  NeighbourVoter training_voter;
  // With consensus: each store annotator's expected accuracy as the final
  // consensus (with the extra voters) estimates it, by contributor id.
  std::map<std::int64_t, double> annotator_accuracy;
  std::size_t judged = 0;                   // label quality recomputed
  std::size_t newly_flagged = 0;            // accepted -> label_issue
  std::size_t cleared = 0;                  // label_issue -> accepted
  std::size_t kept_confident_learning = 0;  // label_issue by confident learning: untouched
  std::size_t kept_reviewed = 0;            // decided by a person: untouched
  std::size_t annotations_only = 0;         // samples without content judged by their consensus
  std::size_t without_vector = 0;  // label_issue samples stored before their vectors were kept
  std::size_t gains_updated = 0;
  double seconds = 0.0;
};

// Recomputes the gain of every accepted sample against the final accepted
// samples (excluding itself) and, as `options` say, re-embeds and re-judges
// labels. All in one transaction: on any error (e.g. a stored sample the new
// embedder cannot embed) nothing changes.
RejudgeReport rejudge(Dataset& dataset, const RejudgeOptions& options = {});

}  // namespace winnow::curation::review
