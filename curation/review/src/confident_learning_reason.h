// Confident learning's label-issue decisions are recognised by their reason:
// kNN re-judgements (rejudge) leave them alone, and confident learning does not
// re-flag them (label_revision.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "winnow/store/metadata_store.h"

namespace winnow::curation::review {

inline constexpr const char* kConfidentLearningReason = "confident learning:";

// Whether the sample's last status decision was confident learning's (relabel
// events leave the status alone, so they are passed over).
inline bool decided_by_confident_learning(store::MetadataStore& store, std::int64_t sample_id) {
  const std::vector<store::EventRecord> events = store.events_of(sample_id);
  auto last = std::find_if(events.rbegin(), events.rend(), [](const store::EventRecord& e) {
    return e.kind != store::kEventRelabel;
  });
  return last != events.rend() && last->reason.rfind(kConfidentLearningReason, 0) == 0;
}

}  // namespace winnow::curation::review
