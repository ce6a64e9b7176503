#include "winnow/store/sample_history.h"

#include <charconv>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/event_record.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

// A sample's last row at or before a revision (?2), joined with its key.
constexpr const char* kStateAt =
    "SELECT h.sample_id, s.external_key, h.status, h.label, h.duplicate_of, h.revision, "
    "h.events_before "
    "FROM sample_history h JOIN samples s ON s.id = h.sample_id "
    "WHERE h.id = (SELECT id FROM sample_history WHERE sample_id = ?1 AND revision <= ?2 "
    "ORDER BY revision DESC, id DESC LIMIT 1)";

SampleState state_of_row(const Statement& row) {
  SampleState state;
  state.sample_id = row.column_int64(0);
  state.external_key = row.column_text(1);
  state.status = parse_sample_status(row.column_text(2));
  state.label = row.column_optional_int64(3);
  state.duplicate_of = row.column_optional_int64(4);
  state.revision = row.column_int64(5);
  state.events_before = row.column_int64(6);
  return state;
}

}  // namespace

std::int64_t SampleHistory::revision() {
  StatementScope query(db_.cached("SELECT value FROM meta WHERE key = ?1"));
  query->bind_all(std::string_view(kRevisionKey));
  if (!query->step()) return 0;
  const std::string text = query->column_text(0);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  WINNOW_THROW_IF_NOT(error == std::errc() && end == text.data() + text.size() && value >= 0,
                      "{}: meta {} is not a revision number: '{}'", db_.path(), kRevisionKey, text);
  return value;
}

std::string SampleHistory::reason_of(const SampleState& state) {
  StatementScope query(
      db_.cached("SELECT reason FROM events WHERE sample_id = ?1 AND id > ?2 ORDER BY id LIMIT 1"));
  query->bind_all(state.sample_id, state.events_before);
  return query->step() ? query->column_text(0) : std::string();
}

std::optional<SampleState> SampleHistory::state_at(std::int64_t sample_id, std::int64_t revision) {
  StatementScope query(db_.cached(kStateAt));
  query->bind_all(sample_id, revision);
  if (!query->step()) return std::nullopt;
  return state_of_row(*query);
}

std::vector<std::int64_t> SampleHistory::reviewed_at(std::int64_t revision) {
  // The events up to `revision` are those before the first state written
  // after it: the store appends a sample's event right after its write.
  StatementScope bound(
      db_.cached("SELECT min(events_before) FROM sample_history WHERE revision > ?1"));
  bound->bind_all(revision);
  std::optional<std::int64_t> last_event;
  if (bound->step() && !bound->is_null(0)) last_event = bound->column_int64(0);
  // Every reviewed sample has its reviews row (the latest verdict): the few
  // reviewed samples' events are read by the events' sample index.
  StatementScope query(
      db_.cached("SELECT r.sample_id FROM reviews r WHERE EXISTS (SELECT 1 FROM events e "
                 "WHERE e.sample_id = r.sample_id AND e.kind = ?1 AND (?2 IS NULL OR e.id <= ?2)) "
                 "ORDER BY r.sample_id"));
  query->bind_all(std::string_view(kEventReview), last_event);
  std::vector<std::int64_t> ids;
  while (query->step()) ids.push_back(query->column_int64(0));
  return ids;
}

void SampleHistory::for_each_at(std::int64_t revision,
                                const std::function<void(const SampleState&)>& visit) {
  // One index seek a sample: its last row at or before the revision.
  Statement query(
      db_,
      "SELECT h.sample_id, s.external_key, h.status, h.label, h.duplicate_of, h.revision, "
      "h.events_before "
      "FROM samples s JOIN sample_history h ON h.id = (SELECT id FROM sample_history "
      "WHERE sample_id = s.id AND revision <= ?1 ORDER BY revision DESC, id DESC LIMIT 1) "
      "ORDER BY s.id");
  query.bind_all(revision);
  while (query.step()) visit(state_of_row(query));
}

void SampleHistory::for_each_changed(
    std::int64_t from, std::int64_t to,
    const std::function<void(const std::optional<SampleState>& before, const SampleState& after)>&
        visit) {
  WINNOW_THROW_IF_NOT(from < to, "{}: revisions {} to {}: the first must come before the second",
                      db_.path(), from, to);
  Statement changed(db_,
                    "SELECT DISTINCT sample_id FROM sample_history "
                    "WHERE revision > ?1 AND revision <= ?2 ORDER BY sample_id");
  changed.bind_all(from, to);
  while (changed.step()) {
    const std::int64_t id = changed.column_int64(0);
    const std::optional<SampleState> after = state_at(id, to);
    if (after) visit(state_at(id, from), *after);
  }
}

}  // namespace winnow::store
