// SampleHistory: every state a sample has had, by dataset revision (schema
// migration 10, table sample_history). Triggers on samples add a row each
// time a sample is inserted or its status, label or duplicate_of change,
// stamped with the revision its write transaction makes: the one after the
// revision in meta (kRevisionKey), which the writer raises last, just before
// it commits. So the dataset as it was at revision R is each sample's last
// row at or before R, whatever happened since (docs/store.md, "Revisions").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "winnow/store/sample_status.h"

namespace winnow::store {

class Database;

// The meta key that holds the dataset's revision: the number of write
// transactions of curation so far (0 before the first).
inline constexpr const char* kRevisionKey = "curation.revision";

// A sample as it stood at some revision.
struct SampleState {
  std::int64_t sample_id = 0;
  std::string external_key;
  SampleStatus status = SampleStatus::accepted;
  std::optional<std::int64_t> label;
  std::optional<std::int64_t> duplicate_of;
  std::int64_t revision = 0;       // of the write that gave it this state
  std::int64_t events_before = 0;  // the last event id before that write
};

class SampleHistory {
 public:
  explicit SampleHistory(Database& db) : db_(db) {}

  // The dataset's revision now (meta kRevisionKey; 0 when none was written).
  // Throws naming the database when the stored value is not a whole number.
  std::int64_t revision();

  // Why the sample came to `state`: the reason of its event written with it
  // ("" when none is stored).
  std::string reason_of(const SampleState& state);

  // Visits, in sample id order, every sample that existed at `revision`,
  // as it stood then.
  void for_each_at(std::int64_t revision, const std::function<void(const SampleState&)>& visit);

  // The ids, ascending, of the samples a person's verdict (a review event)
  // had decided by `revision`. A verdict that changed nothing (keep on an
  // accepted sample) writes no state; it counts from the revision before the
  // next state written after it.
  std::vector<std::int64_t> reviewed_at(std::int64_t revision);

  // Visits, in sample id order, each sample whose state changed after `from`
  // up to `to` (from < to): its state at `from` (none when it did not exist
  // yet) and at `to`.
  void for_each_changed(std::int64_t from, std::int64_t to,
                        const std::function<void(const std::optional<SampleState>& before,
                                                 const SampleState& after)>& visit);

 private:
  std::optional<SampleState> state_at(std::int64_t sample_id, std::int64_t revision);

  Database& db_;
};

}  // namespace winnow::store
