#include "winnow/curation/bulk/listed_verification.h"

#include <algorithm>
#include <limits>

#include "winnow/curation/judge/near_duplicate_check.h"
#include "winnow/error.h"

namespace winnow::curation::bulk {

void verify_listed(const ManifestRecord& record, PriorNeighbours& list,
                   const ListedRecordLookup& listed, const CurationConfig& config,
                   const dedup::NearDuplicateVerifier& image_verifier,
                   const dedup::NearDuplicateVerifier& text_verifier, std::size_t max_verdicts) {
  list.verified_similarities.clear();
  list.verified_thresholds.clear();
  const judge::NearDuplicateCheck check = judge::near_duplicate_check(record);
  if (check == judge::NearDuplicateCheck::none) return;
  const dedup::NearDuplicateVerifier& verifier =
      check == judge::NearDuplicateCheck::text ? text_verifier : image_verifier;
  const double gate = judge::candidate_gate(config, check);
  const std::size_t n = std::min(list.positions.size(), list.similarities.size());
  std::size_t ranks = 0;  // the list is sorted: the ranks above the gate lead it
  while (ranks < n && ranks < max_verdicts && list.positions[ranks] >= 0 &&
         list.similarities[ranks] >= gate) {
    ++ranks;
  }
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  list.verified_similarities.assign(ranks, kNone);
  list.verified_thresholds.assign(ranks, kNone);
  for (std::size_t r = 0; r < ranks; ++r) {
    const ManifestRecord* other = listed(list.positions[r]);
    if (other == nullptr) continue;
    try {
      const double similarity = verifier.similarity(record, *other);
      list.verified_thresholds[r] = verifier.threshold_for(record, *other);
      list.verified_similarities[r] = similarity;
    } catch (const winnow::Error&) {
      // No verdict: the writer verifies the pair itself and meets the error.
    }
  }
}

}  // namespace winnow::curation::bulk
