// What a training run learned about each sample, taken back into the dataset
// (`winnow import-training`; docs/curation.md, "Training feedback"): the
// statistics of each sample's losses (pruning/training_record.h) as JSON
// lines keyed by sample key, stored by TrainingStatsTable, and the label
// check they give: a labelled sample whose mean training loss is above
// ln(classes) (the model gave its label less than chance probability over the
// run) is a label suspect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/review/consensus_labels.h"
#include "winnow/store/training_stats_table.h"

namespace winnow::curation::review {

// At most this many bytes are read from a training file.
inline constexpr std::uint64_t kMaxTrainingFileBytes = std::uint64_t{4} << 30;

struct TrainingRow {
  std::size_t line = 0;
  std::string key;
  std::optional<std::string> label;      // the label the run trained on, when the row says
  std::optional<std::string> predicted;  // the label the model predicted most, when it says
  store::TrainingStats stats;            // sample_id and label unset
};

// Reads JSON lines {"key", "seen", "mean_loss", "loss_trend", "last_loss",
// "last_epoch"} and optionally "label" and "predicted" (other fields ignored;
// blank lines skipped). Throws
// winnow::Error naming the file and line for a line that is not such an object.
std::vector<TrainingRow> read_training_file(const std::string& path);

struct TrainingImport {
  std::int64_t imported = 0;
  std::int64_t unknown = 0;               // rows whose key is in no sample
  std::vector<std::string> unknown_keys;  // the first 20 of them
  std::int64_t other_label = 0;           // rows of a label the sample no longer has
  std::int64_t unknown_predicted = 0;     // predicted labels the dataset does not know
  std::int64_t newly_flagged = 0;         // label issues by the training statistics
  std::int64_t cleared = 0;               // label issues the training statistics clear
  std::int64_t revision = 0;              // the revision the import made (0: none)
};

// Stores the rows' statistics under run name `run` and judges the labels of
// the samples they name again by them (TrainingVerdicts), in one transaction
// that makes one revision. A row whose key names no sample, or whose label
// is not the sample's now, is counted, not stored. Samples a person reviewed
// and confident learning's flags are left as they are.
TrainingImport import_training(Dataset& dataset, const std::vector<TrainingRow>& rows,
                               const std::string& run);

// The label a training run's model predicted most for each sample (the
// stored statistics' `predicted`), as one voter of a consensus, named
// "(training run)": Dawid-Skene weighs it by its estimated confusion like
// any annotator. No votes when no run passed predictions.
ExtraVoter training_voter(store::MetadataStore& store);

// The loss above which a labelled sample's training statistics make it a
// label issue, for a dataset of `classes` classes: ln(classes), the loss of
// a chance-level prediction.
double training_loss_threshold(std::size_t classes);

// The classes the threshold counts: the labels of the store's accepted and
// label_issue samples (MetadataStore::label_quality_by_label), so that the
// label check and the report agree on it.
std::size_t training_classes(store::MetadataStore& store);

// The label verdicts the stored training statistics give: where a sample has
// statistics of a run that trained on its current label, they decide its
// label verdict instead of the kNN vote (docs/curation.md, "Training
// feedback", has the measurements).
class TrainingVerdicts {
 public:
  // Rows are read one sample at a time, as asked (none at all when the store
  // has none); the threshold is over training_classes(store).
  explicit TrainingVerdicts(store::MetadataStore& store);
  // Whether sample `id`, labelled `label` now, is a label issue by its
  // training statistics; nothing when it has none for that label.
  std::optional<bool> flags(std::int64_t id, std::int64_t label) const;
  // Why, for the sample flags() last answered for: "mean training loss
  // 3.120 > 2.303 (ln 10) over 9 losses, run R".
  std::string why(std::int64_t id) const;
  // The same for statistics at hand (of a run on the sample's current label).
  bool flags(const store::TrainingStats& stats) const { return stats.mean_loss > threshold_; }
  std::string why(const store::TrainingStats& stats) const;
  double threshold() const { return threshold_; }

 private:
  const std::optional<store::TrainingStats>& stats_of(std::int64_t id) const;

  store::MetadataStore& store_;
  std::int64_t rows_ = 0;
  std::size_t classes_;
  double threshold_;
  mutable std::int64_t last_id_ = -1;  // the last row read, kept for why()
  mutable std::optional<store::TrainingStats> last_;
};

}  // namespace winnow::curation::review
