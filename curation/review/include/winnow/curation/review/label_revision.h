// revise_label_issues: confident learning with a model's out-of-sample
// predicted probabilities (`winnow ingest --pred-probs`), applied to the
// judged samples of a dataset (label_revision.cpp says what changes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/labels/confident_learning.h"
#include "winnow/curation/readers/pred_probs_reader.h"

namespace winnow::curation::review {

// Out-of-sample predicted probabilities by external key (`ingest --pred-probs`,
// read by readers::read_pred_probs).
using readers::PredProbsTable;

// What revise_label_issues did (label_revision.cpp).
struct LabelRevisionReport {
  labels::ConfidentLearningResult result;  // over `samples`, in id order
  std::vector<std::int64_t> samples;
  std::size_t newly_flagged = 0;  // accepted -> label_issue
  std::size_t confirmed = 0;      // kNN label_issue, now with confident learning's reason
  std::size_t unused_rows = 0;    // rows of no judged, labelled sample
};

// Confident learning over the accepted and label_issue samples that have a
// label and a row in `pred_probs`; flagged accepted samples become
// label_issue (they stay in the index, as voters), and every such sample's
// label_quality becomes confident learning's score.
LabelRevisionReport revise_label_issues(Dataset& dataset, const PredProbsTable& pred_probs,
                                        const labels::ConfidentLearningOptions& options,
                                        std::optional<std::int64_t> batch_id = std::nullopt);

}  // namespace winnow::curation::review
