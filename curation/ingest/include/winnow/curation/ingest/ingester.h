// Ingester: how a batch goes into a Dataset. Each manifest is one batch in
// one write transaction, decided record by record (IngestBatch, rules in
// judge/record_decision.h), after which the stale labels are judged again
// (review/stale_labels.h). The engine, the order of decisions and the
// threads: docs/ingest.md, "Threads" and "Order of decisions".
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winnow/curation/bulk/job_record.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/batch_report.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/error.h"

namespace winnow::curation::bulk {
class JobPositions;
}  // namespace winnow::curation::bulk

namespace winnow::curation::ingest {

struct IngestContext;  // ingest_context.h

// Thrown by ingest_batch when its stop flag was set: the batch's transaction
// was rolled back and nothing of it kept (kind busy: try again later).
class BatchInterrupted : public Error {
 public:
  explicit BatchInterrupted(const std::string& batch);
};

// The entries of one batch, one at a time: fills `entry` and returns true, or
// returns false at the end (ManifestReader::next has this shape).
using EntrySource = std::function<bool(readers::ManifestEntry& entry)>;
// The same for a bulk job's batch: each entry with what the job adds to it
// (left empty for an entry that has nothing: a rejection, say).
using JobEntrySource = std::function<bool(readers::ManifestEntry& entry, bulk::JobRecord& job)>;

// The batch identity under which a manifest of `checksum` is ingested again
// (`winnow ingest --redo`, say after `init` fixed the config that refused its
// records): `checksum` itself while no batch of it is done, else the first of
// "CHECKSUM:redo-2", "CHECKSUM:redo-3", ... not done. The earlier batch and
// its samples stay as they were (a rejected record's key is free again).
std::string redo_checksum(store::MetadataStore& store, const std::string& checksum);

class Ingester {
 public:
  explicit Ingester(Dataset& dataset);
  ~Ingester();
  Ingester(const Ingester&) = delete;
  Ingester& operator=(const Ingester&) = delete;

  Dataset& dataset() { return dataset_; }

  // Ingests one manifest as one batch, in one transaction. A checksum
  // already done is skipped. Entries are read and decided micro_batch at a
  // time, so memory does not grow with the manifest. Throws winnow::Error on
  // a store/index failure (the batch is marked failed and nothing of it is
  // kept), and BatchInterrupted when `stop` is set meanwhile.
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           const EntrySource& next_entry, const std::atomic<bool>* stop = nullptr);
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           readers::ManifestReader& reader,
                           const std::atomic<bool>* stop = nullptr);
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           std::vector<readers::ManifestEntry> entries);
  // A batch of a bulk job (start_job): as ingest_batch, each record with its
  // precomputed embedding and its place and prior neighbours in the job.
  BatchReport ingest_job_batch(const std::string& name, const std::string& checksum,
                               const JobEntrySource& next_entry,
                               const std::atomic<bool>* stop = nullptr);
  // The same for entries at hand, jobs[i] what the job adds to entries[i]
  // (as many of them as entries).
  BatchReport ingest_job_batch(const std::string& name, const std::string& checksum,
                               std::vector<readers::ManifestEntry> entries,
                               std::vector<bulk::JobRecord> jobs);

  // Begins a bulk job of `records` records (winnow.dask, phase 2), numbered
  // 0 .. records-1 in the job's order by JobRecord::position: from now on a
  // chunk of ingest_job_batch whose records bring prior neighbour lists takes its
  // neighbours from them instead of searching the index. Only a dataset with
  // no accepted or flagged sample can begin one (the lists know nothing of
  // earlier samples): returns false otherwise, and the lists are ignored.
  // The job ends when a batch fails or another process writes the dataset
  // (later lists are ignored: every record is searched, exact either way).
  bool start_job(std::size_t records);
  bool can_start_job();
  bool job_under_way() const { return job_ != nullptr; }

 private:
  IngestContext context();  // what an IngestBatch works on

  Dataset& dataset_;
  std::unique_ptr<bulk::JobPositions> job_;  // a bulk job under way (start_job)
};

}  // namespace winnow::curation::ingest
