// rejudge_stale_labels: after a batch, the labels judged when the dataset was
// much smaller are judged again against today's (stale_labels.cpp says which
// and how), inside the batch's transaction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/labels/label_evidence.h"
#include "winnow/curation/review/label_judgement_log.h"

namespace winnow::curation::review {

// What re-judging the stale labels after a batch did .
struct LabelRejudgeCounts {
  std::size_t rejudged = 0;       // labelled samples judged again
  std::size_t newly_flagged = 0;  // accepted -> label_issue
  std::size_t cleared = 0;        // label_issue -> accepted
  // Judged again, and the vote would have flagged them, but it abstains on
  // their class (labels::LabelEvidence): accepted, or their flag cleared.
  std::size_t abstained = 0;
};

// After the samples of batch `batch_id` (judged in `batch`), inside its
// transaction: judges again the labels judged against fewer than voters /
// (1 + label_rejudge_growth) labelled samples; the revisit events name the
// batch.
LabelRejudgeCounts rejudge_stale_labels(Dataset& dataset, std::int64_t batch_id,
                                        const std::vector<JudgedRange>& batch);

// After that, inside the same transaction, with `evidence` read from the
// store then (stored_label_evidence): the kNN vote's label issues in classes
// it now abstains on (flagged while the class was judged) are cleared, so
// that where it abstains no sample stands flagged by it; confident
// learning's flags stay. Clearing changes no label quality, so `evidence`
// holds after it. Returns how many were cleared.
std::size_t clear_abstained_label_issues(Dataset& dataset, std::int64_t batch_id,
                                         const labels::LabelEvidence& evidence);

}  // namespace winnow::curation::review
