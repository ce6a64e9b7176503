// EventRecord: one entry of the append-only decision log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "winnow/store/sample_status.h"

namespace winnow::store {

// Event kinds the store writes.
inline constexpr const char* kEventIngest = "ingest";    // a sample's first decision
inline constexpr const char* kEventRevisit = "revisit";  // a later status change
inline constexpr const char* kEventRelabel = "relabel";  // a new label (e.g. a consensus)
inline constexpr const char* kEventReview = "review";    // a person's verdict (ReviewRecord)
inline constexpr const char* kEventBatchStarted = "batch_started";
inline constexpr const char* kEventBatchDone = "batch_done";
inline constexpr const char* kEventBatchFailed = "batch_failed";
// The process ingesting the batch died before finishing it (found on restart).
inline constexpr const char* kEventBatchInterrupted = "batch_interrupted";

struct EventRecord {
  std::int64_t id = 0;
  std::optional<std::int64_t> sample_id;  // empty for batch events
  std::optional<std::int64_t> batch_id;
  std::string kind;
  std::optional<SampleStatus> decision;  // the status the sample received
  std::string reason;
  std::string details_json;  // empty when none
  std::string created_at;
};

}  // namespace winnow::store
