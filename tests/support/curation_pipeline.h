// test::Pipeline: a Dataset opened with an Ingester on it, as the CLI's
// commands hold them, with the calls the tests make on both in one place.
// The review operations are the review/ functions on the dataset.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/review/label_revision.h"
#include "winnow/curation/review/rejudge.h"

namespace winnow::test {

class Pipeline {
 public:
  static void init(const std::string& db, const curation::CurationConfig& config) {
    curation::Dataset::init(db, config);
  }
  explicit Pipeline(const std::string& db) : dataset_(db), ingester_(dataset_) {}

  curation::Dataset& dataset() { return dataset_; }
  curation::ingest::Ingester& ingester() { return ingester_; }

  template <typename... Args>
  curation::ingest::BatchReport ingest_batch(Args&&... args) {
    return ingester_.ingest_batch(std::forward<Args>(args)...);
  }
  template <typename... Args>
  curation::ingest::BatchReport ingest_job_batch(Args&&... args) {
    return ingester_.ingest_job_batch(std::forward<Args>(args)...);
  }
  bool start_job(std::size_t records) { return ingester_.start_job(records); }
  bool can_start_job() { return ingester_.can_start_job(); }
  bool job_under_way() const { return ingester_.job_under_way(); }

  curation::review::RejudgeReport rejudge(const curation::review::RejudgeOptions& options = {}) {
    return curation::review::rejudge(dataset_, options);
  }
  curation::review::LabelRevisionReport revise_label_issues(
      const curation::review::PredProbsTable& pred_probs,
      const curation::labels::ConfidentLearningOptions& options,
      std::optional<std::int64_t> batch_id = std::nullopt) {
    return curation::review::revise_label_issues(dataset_, pred_probs, options, batch_id);
  }

  store::MetadataStore& store() { return dataset_.store(); }
  const curation::CurationConfig& config() const { return dataset_.config(); }
  const curation::embed::Embedder& embedder() const { return dataset_.embedder(); }
  const curation::LabelNames& label_names() const { return dataset_.label_names(); }
  curation::readers::ImageReading image_reading() const { return dataset_.image_reading(); }
  curation::IndexInfo index_info() const { return dataset_.index_info(); }
  const std::string& index_path() const { return dataset_.index_path(); }
  void set_index_snapshots(curation::IndexSnapshots when) { dataset_.set_index_snapshots(when); }
  void set_threads(int threads) { dataset_.set_threads(threads); }
  int threads() const { return dataset_.threads(); }
  void save_index_snapshot() { dataset_.save_index_snapshot(); }
  bool save_index_if_behind() { return dataset_.save_index_if_behind(); }

 private:
  curation::Dataset dataset_;
  curation::ingest::Ingester ingester_;
};

}  // namespace winnow::test
