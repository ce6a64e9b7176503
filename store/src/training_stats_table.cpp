#include "winnow/store/training_stats_table.h"

#include <cmath>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"

namespace winnow::store {

namespace {

constexpr const char* kColumns =
    "SELECT sample_id, seen, mean_loss, loss_trend, last_loss, last_epoch, run, label, "
    "predicted FROM training_stats ";

TrainingStats read_row(const Statement& row) {
  TrainingStats s;
  s.sample_id = row.column_int64(0);
  s.seen = row.column_int64(1);
  s.mean_loss = row.column_double(2);
  s.loss_trend = row.column_double(3);
  s.last_loss = row.column_double(4);
  s.last_epoch = row.column_int64(5);
  s.run = row.column_text(6);
  s.label = row.column_optional_int64(7);
  s.predicted = row.column_optional_int64(8);
  return s;
}

}  // namespace

void TrainingStatsTable::put(const std::vector<TrainingStats>& stats) {
  for (const TrainingStats& s : stats) {
    WINNOW_THROW_IF_NOT(std::isfinite(s.mean_loss) && std::isfinite(s.loss_trend) &&
                            std::isfinite(s.last_loss) && s.seen >= 0,
                        "{}: training statistics of sample {} hold a value that is not finite "
                        "or a negative count",
                        db_.path(), s.sample_id);
  }
  Transaction transaction(db_, Transaction::Nested::join);
  StatementScope insert(db_.cached(
      "INSERT INTO training_stats (sample_id, seen, mean_loss, loss_trend, last_loss, "
      "last_epoch, run, label, predicted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
      "ON CONFLICT (sample_id) DO UPDATE SET seen = excluded.seen, "
      "mean_loss = excluded.mean_loss, loss_trend = excluded.loss_trend, "
      "last_loss = excluded.last_loss, last_epoch = excluded.last_epoch, run = excluded.run, "
      "label = excluded.label, predicted = excluded.predicted"));
  for (const TrainingStats& s : stats) {
    insert->bind_all(s.sample_id, s.seen, s.mean_loss, s.loss_trend, s.last_loss, s.last_epoch,
                     std::string_view(s.run), s.label, s.predicted);
    insert->run();
  }
  transaction.commit();
}

std::optional<TrainingStats> TrainingStatsTable::find(std::int64_t sample_id) {
  StatementScope query(db_.cached(std::string(kColumns) + "WHERE sample_id = ?1"));
  query->bind_all(sample_id);
  if (!query->step()) return std::nullopt;
  return read_row(*query);
}

void TrainingStatsTable::for_each(const std::function<void(const TrainingStats&)>& visit) {
  Statement query(db_, std::string(kColumns) + "ORDER BY sample_id");
  query.bind_all();
  while (query.step()) visit(read_row(query));
}

std::int64_t TrainingStatsTable::count() {
  StatementScope query(db_.cached("SELECT count(*) FROM training_stats"));
  query->bind_all();
  query->step();
  return query->column_int64(0);
}

}  // namespace winnow::store
