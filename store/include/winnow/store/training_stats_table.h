// TrainingStatsTable: what a training run learned about each sample, taken
// back into the store (schema migrations 11 and 12, table training_stats;
// `winnow import-training`): the latest run's statistics of the sample's
// losses (pruning/training_record.h). A later import replaces a sample's row.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace winnow::store {

class Database;

struct TrainingStats {
  std::int64_t sample_id = 0;
  std::int64_t seen = 0;  // losses the run recorded
  double mean_loss = 0.0;
  double loss_trend = 0.0;  // slope of loss against epoch
  double last_loss = 0.0;
  std::int64_t last_epoch = 0;
  std::string run;                        // the name the import gave the run
  std::optional<std::int64_t> label;      // the sample's label the run trained on
  std::optional<std::int64_t> predicted;  // the label the model predicted in most epochs
};

class TrainingStatsTable {
 public:
  explicit TrainingStatsTable(Database& db) : db_(db) {}

  // Writes `stats` (replacing each sample's row), in one transaction or the
  // caller's. Throws naming the sample for an unknown id or a value that is
  // not finite, writing nothing.
  void put(const std::vector<TrainingStats>& stats);
  std::optional<TrainingStats> find(std::int64_t sample_id);
  void for_each(const std::function<void(const TrainingStats&)>& visit);
  std::int64_t count();

 private:
  Database& db_;
};

}  // namespace winnow::store
