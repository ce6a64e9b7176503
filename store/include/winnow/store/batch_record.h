// BatchRecord: one ingest batch, i.e. one manifest file, identified by the
// content hash (checksum) of the manifest so it is processed exactly once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "winnow/store/sample_status.h"

namespace winnow::store {

// pending -> running -> done | failed; running and failed batches can be
// started again (a redo after a crash or an error); done is final.
enum class BatchState { pending, running, done, failed };

std::string_view to_string(BatchState state);

// Inverse of to_string; throws winnow::Error naming `name` when it is unknown.
BatchState parse_batch_state(std::string_view name);

struct BatchRecord {
  std::int64_t id = 0;
  std::string file_name;
  std::string checksum;
  BatchState state = BatchState::pending;
  std::int64_t attempts = 0;  // how many times the batch was started
  StatusCounts counts;        // samples of this batch per status, set when done
  std::string error;          // why the last attempt failed; empty otherwise
  std::string created_at;     // ISO-8601 UTC timestamps
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
};

}  // namespace winnow::store
