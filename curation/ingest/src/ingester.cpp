#include "winnow/curation/ingest/ingester.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "winnow/clock.h"
#include "winnow/curation/bulk/job_positions.h"
#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/dataset/lookup/stored_sample_filter.h"
#include "winnow/curation/review/stale_labels.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/transaction.h"

#include "ingest_batch.h"

namespace winnow::curation::ingest {

BatchInterrupted::BatchInterrupted(const std::string& batch)
    : Error(fmt::format("ingest of batch '{}' was interrupted by a stop request; nothing of it was "
                        "kept",
                        batch),
            __func__, __FILE__, __LINE__, ErrorKind::busy) {}

Ingester::Ingester(Dataset& dataset) : dataset_(dataset) {}

Ingester::~Ingester() = default;

IngestContext Ingester::context() {
  Dataset& d = dataset_;
  IngestContext context{d.store(),          d.index(),         d.embedder(),    d.config(),
                        d.image_verifier(), d.text_verifier(), d.label_names(), d.accepted_labels(),
                        d.stored_samples(), d.pool(),          job_.get()};
  context.stored_contents = &d.stored_contents();
  context.text_sketches = &d.text_sketches();
  return context;
}

bool Ingester::can_start_job() {
  return dataset_.index().size() == 0;
}

bool Ingester::start_job(std::size_t records) {
  job_.reset();
  if (!can_start_job()) return false;
  job_ = std::make_unique<bulk::JobPositions>(records, dataset_.revision());
  return true;
}

// --- ingest --------------------------------------------------------------------

BatchReport Ingester::ingest_batch(const std::string& name, const std::string& checksum,
                                   std::vector<readers::ManifestEntry> entries) {
  std::vector<bulk::JobRecord> none(entries.size());  // not part of a bulk job
  return ingest_job_batch(name, checksum, std::move(entries), std::move(none));
}

BatchReport Ingester::ingest_job_batch(const std::string& name, const std::string& checksum,
                                       std::vector<readers::ManifestEntry> entries,
                                       std::vector<bulk::JobRecord> jobs) {
  WINNOW_THROW_IF_NOT(jobs.size() == entries.size(), "batch '{}': {} job records for {} entries",
                      name, jobs.size(), entries.size());
  std::size_t next = 0;
  return ingest_job_batch(name, checksum, [&](readers::ManifestEntry& entry, bulk::JobRecord& job) {
    if (next == entries.size()) return false;
    job = std::move(jobs[next]);
    entry = std::move(entries[next++]);
    return true;
  });
}

BatchReport Ingester::ingest_batch(const std::string& name, const std::string& checksum,
                                   readers::ManifestReader& reader, const std::atomic<bool>* stop) {
  // Deferred: the batch parses a chunk's lines (and decodes their files) on its threads.
  return ingest_batch(
      name, checksum, [&](readers::ManifestEntry& entry) { return reader.next_deferred(entry); },
      stop);
}

BatchReport Ingester::ingest_batch(const std::string& name, const std::string& checksum,
                                   const EntrySource& next_entry, const std::atomic<bool>* stop) {
  return ingest_job_batch(
      name, checksum,
      [&](readers::ManifestEntry& entry, bulk::JobRecord&) { return next_entry(entry); }, stop);
}

BatchReport Ingester::ingest_job_batch(const std::string& name, const std::string& checksum,
                                       const JobEntrySource& next_entry,
                                       const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  BatchReport report;
  report.name = name;
  store::BatchRecord batch = dataset_.store().register_batch(name, checksum);
  report.batch_id = batch.id;
  if (batch.state == store::BatchState::done) {
    report.skipped = true;
    report.counts = batch.counts;
    report.seconds = seconds_since(t0);
    return report;
  }
  batch = dataset_.store().start_batch(batch.id);

  double add_seconds = 0.0;
  try {
    store::Transaction tx(dataset_.store().database());
    dataset_.sync_with_store();
    // Another process wrote the dataset since the job's last batch: its
    // samples are in no prior list, so the job's lists no longer hold.
    if (job_ && job_->revision() != dataset_.revision()) job_.reset();
    const std::size_t names_before = dataset_.label_names().size();
    dataset_.stored_samples().catch_up(dataset_.store());
    IngestBatch ingest(context(), batch.id);
    ingest.run(next_entry, name, stop);
    report.phases = ingest.phases();
    auto phase_start = std::chrono::steady_clock::now();
    report.labels_rejudged =
        review::rejudge_stale_labels(dataset_, batch.id, ingest.judged_ranges());
    const labels::LabelEvidence evidence =
        stored_label_evidence(dataset_.store(), dataset_.config());
    report.labels_rejudged.cleared +=
        review::clear_abstained_label_issues(dataset_, batch.id, evidence);
    report.phases.rejudge_labels = seconds_since(phase_start);
    if (evidence.samples() > 0) {
      report.label_check = label_check_json(evidence, dataset_.label_names());
      report.label_check["would_have_flagged"] = ingest.label_abstentions();
    }
    report.rejections = ingest.rejections().groups();
    report.other_rejections = ingest.rejections().other_count();
    report.rejected_not_stored = ingest.refusals_not_stored();
    report.job_neighbours = ingest.job_neighbours();
    report.label_conflicts = ingest.label_conflicts();
    report.annotation_rounds = ingest.annotation_rounds();
    if (dataset_.label_names().size() != names_before) {
      dataset_.label_names().write(dataset_.store());
    }
    batch = dataset_.store().finish_batch(batch.id);
    dataset_.store().record_writer();
    const std::int64_t revision = dataset_.next_revision();
    add_seconds = ingest.index_add_seconds();
    phase_start = std::chrono::steady_clock::now();
    tx.commit();
    report.phases.commit = seconds_since(phase_start);
    dataset_.request_checkpoint();
    dataset_.committed(revision);
    if (job_) job_->set_revision(revision);
  } catch (const std::exception& e) {
    job_.reset();  // the positions it published were rolled back
    dataset_.forget_uncommitted();
    try {
      dataset_.store().fail_batch(batch.id, e.what());
    } catch (const std::exception&) {
      // The store is busy or broken too: the batch stays `running`, the
      // first error is the one to report.
    }
    throw;
  }
  const IndexSaveOutcome saved = dataset_.after_index_insertions(add_seconds);
  report.index_saved = saved.saved;
  report.index_save_error = saved.error;
  report.phases.save_index = saved.seconds;
  report.counts = batch.counts;
  report.seconds = seconds_since(t0);
  return report;
}

std::string redo_checksum(store::MetadataStore& store, const std::string& checksum) {
  std::string redo = checksum;
  for (int n = 2;; ++n) {
    const std::optional<store::BatchRecord> batch = store.find_batch_by_checksum(redo);
    if (!batch || batch->state != store::BatchState::done) return redo;
    redo = fmt::format("{}:redo-{}", checksum, n);
  }
}

}  // namespace winnow::curation::ingest
