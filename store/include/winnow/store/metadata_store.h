// MetadataStore: the typed operations the curation pipeline needs on one
// dataset's database. Every write runs in a transaction; inside a caller's
// Transaction the operations join it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "winnow/store/batch_record.h"
#include "winnow/store/database.h"
#include "winnow/store/event_record.h"
#include "winnow/store/review_record.h"
#include "winnow/store/sample_record.h"
#include "winnow/store/sample_status.h"

namespace winnow::store {

class MetadataStore {
 public:
  explicit MetadataStore(std::string path, const DatabaseOptions& options = {});

  Database& database() { return db_; }

  // --- samples -------------------------------------------------------------
  // Records a sample, its annotations and its ingest event; returns its id.
  std::int64_t insert_sample(const NewSample& sample);
  // The same for many samples in one transaction (all or nothing); returns
  // the ids in order. Throws naming the external key of a sample that cannot
  // be recorded (key already present, unknown duplicate_of, ...). Inside a
  // caller's transaction it joins it without a savepoint
  // (Transaction::Nested::join): after a failure the caller rolls back.
  std::vector<std::int64_t> insert_samples(const std::vector<NewSample>& samples);

  std::optional<SampleRecord> find_sample(std::int64_t id);
  std::optional<SampleRecord> find_by_external_key(std::string_view external_key);
  // The earliest sample with this content hash that was not rejected (the
  // original of exact copies: a rejected record is no part of the dataset,
  // and its content may come again once the dataset can take it), or that a
  // person dropped (`winnow review`: its copies stay out as its duplicates).
  std::optional<SampleRecord> find_by_content_hash(std::string_view content_hash);
  std::vector<AnnotationRecord> annotations_of(std::int64_t sample_id);
  // Annotations over time (a later round for a stored sample): one more
  // annotation of sample `sample_id`, and a new label for annotation
  // `annotation_id` (an annotator's later answer replacing his earlier one).
  void add_annotation(std::int64_t sample_id, const NewAnnotation& annotation);
  void set_annotation_label(std::int64_t annotation_id, std::int64_t label);
  // Appends an event that records something about a sample without changing
  // its status (decision NULL): e.g. kind "annotations" for a later round.
  void append_note(std::int64_t sample_id, std::optional<std::int64_t> batch_id, const char* kind,
                   std::string_view reason, const std::string& details_json);

  // Revisits a decision: sets status and duplicate_of, appends a revisit event.
  void update_status(std::int64_t sample_id, const Decision& decision,
                     std::optional<std::int64_t> batch_id = std::nullopt);
  // Replaces the sample's label, appends a relabel event (its decision is
  // the sample's status, unchanged). The label before stays in the event's
  // reason and in the sample's annotations.
  void relabel(std::int64_t sample_id, std::int64_t label, std::string_view reason,
               const std::string& details_json = {});
  // Bulk setters, one transaction each; throw on an unknown id or a
  // non-finite value, writing nothing (inside a caller's transaction they
  // join it, as insert_samples does: the caller rolls back).
  void set_gains(const std::vector<SampleScore>& gains);
  void set_label_qualities(const std::vector<SampleScore>& qualities);

  // --- a person's verdicts (docs/review.md) --------------------------------
  // Applies one verdict in one transaction (joining a caller's): the sample
  // takes `decision`'s status and duplicate_of, and review.label when set; a
  // review event records it; the sample's reviews row becomes `review`.
  void record_review(const ReviewRecord& review, const Decision& decision);
  std::optional<ReviewRecord> review_of(std::int64_t sample_id);
  std::vector<ReviewRecord> reviews();  // the latest verdict of each reviewed sample, by id

  // --- reports -------------------------------------------------------------
  StatusCounts count_by_status();
  // Per label, the accepted and label_issue samples with a label quality and
  // the sum of their qualities: what labels::LabelEvidence is read from.
  // Triggers keep them as samples are written, each quality rounded to a
  // multiple of 1 / kLabelQualityScale, so that the sums are exact.
  struct LabelQualitySum {
    std::int64_t label = 0;
    std::int64_t samples = 0;
    double quality_sum = 0.0;
  };
  static constexpr double kLabelQualityScale = 4294967296.0;  // 2^32
  std::vector<LabelQualitySum> label_quality_by_label();      // ordered by label
  // Duplicates (exact or near) whose label differs from their original's:
  // label conflicts.
  std::int64_t count_label_conflicts();
  // SQLite's PRAGMA quick_check: what it found wrong (at most `max_problems`
  // messages), empty when the database file is sound.
  std::vector<std::string> quick_check(int max_problems = 100);
  bool has_samples();                                     // any sample at all, whatever its status
  std::map<std::string, StatusCounts> count_by_source();  // "" = unknown source
  std::vector<AcceptedSample> accepted_samples();         // ordered by id
  // The same one at a time, without holding them all (a million at 1M samples).
  void for_each_accepted_sample(const std::function<void(const AcceptedSample&)>& visit);
  // Calls `visit` for every sample (or those with `only` status) in id order,
  // from one consistent snapshot. `visit` must not write to this store.
  void for_each_sample(const std::function<void(const SampleRecord&)>& visit,
                       std::optional<SampleStatus> only = std::nullopt);
  // The reason and details (JSON text, "" when none) of the decision that gave
  // a sample its status: its latest ingest or revisit event.
  struct DecisionText {
    std::string reason;
    std::string details_json;
  };
  // for_each_sample, with each sample's DecisionText.
  void for_each_sample_with_decision(
      const std::function<void(const SampleRecord&, const DecisionText&)>& visit,
      std::optional<SampleStatus> only = std::nullopt);
  // The external key and content hash of every sample with an id above
  // `after_id`, in id order, from one consistent snapshot: what a cache of
  // the stored samples' identities catches up with (samples are never
  // deleted, and neither changes). `visit` must not write to this store.
  struct SampleIdentity {
    std::int64_t id = 0;
    std::string external_key;
    std::string content_hash;
  };
  void for_each_sample_identity(std::int64_t after_id,
                                const std::function<void(const SampleIdentity&)>& visit);
  std::vector<EventRecord> events_of(std::int64_t sample_id);
  std::vector<EventRecord> events_of_batch(std::int64_t batch_id);

  // Bulk reads for the quality report (a million samples, millions of
  // annotations): rows without per-row strings, names resolved once through
  // contributors(). Each for_each_* runs one query, so it sees one consistent
  // snapshot; `visit` must not write to this store.
  struct AnnotationRow {
    std::int64_t id = 0;  // annotations.id: ascending in the order they were written
    std::int64_t sample_id = 0;
    std::optional<std::int64_t> annotator_id;  // contributors.id; empty when unknown
    std::int64_t label = 0;
  };
  struct Contributor {
    std::int64_t id = 0;
    std::string name;
    std::string kind;  // "source" or "annotator"
  };
  // Every annotation in sample-id order (then annotation id).
  void for_each_annotation(const std::function<void(const AnnotationRow&)>& visit);
  // The largest annotation id written at or before `timestamp` (ISO-8601
  // UTC, as the store writes them): ids grow with time, so a binary search
  // over ids with one lookup per step. Empty when none is that old.
  std::optional<std::int64_t> last_annotation_by(const std::string& timestamp);
  // Every sample event (ingest or revisit) whose decision is `decision`, in id order.
  void for_each_sample_event(const std::function<void(const EventRecord&)>& visit,
                             SampleStatus decision);
  std::vector<Contributor> contributors();  // ordered by id
  std::vector<BatchRecord> all_batches();   // every state, ordered by id

  // --- ingest batches ------------------------------------------------------
  // Registers a manifest as a pending batch. Idempotent: a checksum already
  // known returns the existing batch unchanged, whatever its state.
  BatchRecord register_batch(std::string_view file_name, std::string_view checksum);
  // pending, running (a redo after a crash) or failed -> running; attempts+1.
  // Throws for a done batch.
  BatchRecord start_batch(std::int64_t batch_id);
  // running -> done; stores the batch's sample counts per status.
  BatchRecord finish_batch(std::int64_t batch_id);
  // running -> failed, keeping `error`.
  BatchRecord fail_batch(std::int64_t batch_id, std::string_view error);
  // Records that the process ingesting a running batch died (a batch_interrupted
  // event); returns how many times that has happened to this batch.
  std::int64_t record_batch_interrupted(std::int64_t batch_id, std::string_view reason);
  std::optional<BatchRecord> find_batch(std::int64_t batch_id);
  std::optional<BatchRecord> find_batch_by_checksum(std::string_view checksum);
  std::vector<BatchRecord> batches_in_state(BatchState state);  // ordered by id

  // --- key/value metadata (index file, embedder config, ...) ---------------
  void set_meta(std::string_view key, std::string_view value);
  std::optional<std::string> get_meta(std::string_view key);

  // --- which winnow wrote this database (meta winnow.created_by, winnow.written_by)
  static constexpr const char* kCreatedByKey = "winnow.created_by";
  static constexpr const char* kWrittenByKey = "winnow.written_by";
  // Records this build's version (winnow/version.h) as the last writer, and as
  // the creator when `creating`; called inside each writing transaction.
  void record_writer(bool creating = false);
  // The recorded versions; empty when not recorded (a database older than the record).
  std::optional<std::string> created_by() { return get_meta(kCreatedByKey); }
  std::optional<std::string> written_by() { return get_meta(kWrittenByKey); }

 private:
  // Contributor name -> id, one map per kind (source, annotator).
  using ContributorIds = std::array<std::map<std::string, std::int64_t, std::less<>>, 2>;
  struct SampleStatements;  // the cached statements insert_samples reuses

  std::int64_t insert_one(const NewSample& sample, const std::string& now,
                          SampleStatements& statements, ContributorIds& fresh);
  std::int64_t contributor_id(int kind, const std::string& name, ContributorIds& fresh);
  void set_scores(const char* update_sql, const char* what, const std::vector<SampleScore>& scores);
  BatchRecord require_batch(std::int64_t batch_id);
  void append_batch_event(std::int64_t batch_id, const char* kind, std::string_view reason,
                          const std::string& now);

  Database db_;
  // Contributor ids known to be committed. Ids created by a transaction join
  // this cache only once it has really committed, so a rollback never leaves
  // a dead id here.
  ContributorIds contributor_ids_;
};

}  // namespace winnow::store
