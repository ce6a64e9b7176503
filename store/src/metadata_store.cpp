#include "winnow/store/metadata_store.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "timestamp.h"
#include "winnow/error.h"
#include "winnow/store/migrations.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"
#include "winnow/version.h"

namespace winnow::store {
namespace {

enum ContributorKind : int { kSource = 0, kAnnotator = 1 };

const char* contributor_kind_name(int kind) {
  return kind == kSource ? "source" : "annotator";
}

// The columns read_sample() reads, in its order, and the tables they come from.
#define WINNOW_SAMPLE_FIELDS                                                          \
  "s.id, s.external_key, s.content_hash, s.label, c.name, s.status, s.duplicate_of, " \
  "s.label_quality, s.gain, s.batch_id, s.created_at, s.updated_at "
#define WINNOW_SAMPLE_FROM "FROM samples s LEFT JOIN contributors c ON c.id = s.source_id "
#define WINNOW_SAMPLE_COLUMNS "SELECT " WINNOW_SAMPLE_FIELDS WINNOW_SAMPLE_FROM
#define WINNOW_EACH_SAMPLE "WHERE ?1 IS NULL OR s.status = ?1 ORDER BY s.id"

constexpr const char* kFindSampleById = WINNOW_SAMPLE_COLUMNS "WHERE s.id = ?1";
constexpr const char* kFindSampleByKey = WINNOW_SAMPLE_COLUMNS "WHERE s.external_key = ?1";
// One epoch of the content-hash index (migration 4): the expression must be
// the index's, id >> 18, for the index to serve it.
constexpr const char* kFindSampleByHashInEpoch = WINNOW_SAMPLE_COLUMNS
    "WHERE (s.id >> 18) = ?2 AND s.content_hash = ?1 AND (s.status <> 'rejected' OR EXISTS "
    "(SELECT 1 FROM reviews r WHERE r.sample_id = s.id AND r.verdict = 'drop')) "
    "ORDER BY s.id LIMIT 1";
static_assert(kContentHashEpochBits == 18,
              "kFindSampleByHashInEpoch and find_by_content_hash name the epoch's shift");
constexpr const char* kEachSample = WINNOW_SAMPLE_COLUMNS WINNOW_EACH_SAMPLE;
// Each sample with the reason and details of its latest decision event (the one
// that gave it its status; columns 12 and 13); the correlated lookup uses the
// events_sample index.
constexpr const char* kEachSampleWithDecision =
    "SELECT " WINNOW_SAMPLE_FIELDS ", e.reason, e.details " WINNOW_SAMPLE_FROM
    "LEFT JOIN events e ON e.id = (SELECT max(x.id) FROM events x "
    "WHERE x.sample_id = s.id AND x.decision IS NOT NULL) " WINNOW_EACH_SAMPLE;
#undef WINNOW_EACH_SAMPLE
#undef WINNOW_SAMPLE_COLUMNS
#undef WINNOW_SAMPLE_FROM
#undef WINNOW_SAMPLE_FIELDS

// No RETURNING: SQLite runs RETURNING as a trigger, which makes the insert a
// multi-write statement with its own statement journal; inside the nested
// savepoint of a batch, ending each such statement walks the in-memory
// journal's chunk list from the start (a visible share of an ingest). The id is
// the last insert rowid, and no changed row means the key was taken.
constexpr const char* kInsertSample =
    "INSERT INTO samples (external_key, content_hash, label, source_id, status, duplicate_of, "
    "label_quality, gain, batch_id, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10) "
    "ON CONFLICT (external_key) DO NOTHING";
constexpr const char* kInsertAnnotation =
    "INSERT INTO annotations (sample_id, annotator_id, label, created_at) "
    "VALUES (?1, ?2, ?3, ?4)";
constexpr const char* kInsertEvent =
    "INSERT INTO events (sample_id, batch_id, kind, decision, reason, details, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr const char* kEventColumns =
    "SELECT id, sample_id, batch_id, kind, decision, reason, details, created_at FROM events ";
constexpr const char* kBatchColumns =
    "SELECT id, file_name, checksum, state, attempts, n_accepted, n_duplicate_exact, "
    "n_duplicate_near, n_label_issue, n_rejected, error, created_at, started_at, finished_at "
    "FROM ingest_batches ";

SampleRecord read_sample(const Statement& row) {
  SampleRecord sample;
  sample.id = row.column_int64(0);
  sample.external_key = row.column_text(1);
  sample.content_hash = row.column_text(2);
  sample.label = row.column_optional_int64(3);
  sample.source = row.column_text(4);
  sample.status = parse_sample_status(row.column_text(5));
  sample.duplicate_of = row.column_optional_int64(6);
  sample.label_quality = row.column_optional_double(7);
  sample.gain = row.column_optional_double(8);
  sample.batch_id = row.column_optional_int64(9);
  sample.created_at = row.column_text(10);
  sample.updated_at = row.column_text(11);
  return sample;
}

EventRecord read_event(const Statement& row) {
  EventRecord event;
  event.id = row.column_int64(0);
  event.sample_id = row.column_optional_int64(1);
  event.batch_id = row.column_optional_int64(2);
  event.kind = row.column_text(3);
  if (!row.is_null(4)) {
    event.decision = parse_sample_status(row.column_text(4));
  }
  event.reason = row.column_text(5);
  event.details_json = row.column_text(6);
  event.created_at = row.column_text(7);
  return event;
}

BatchRecord read_batch(const Statement& row) {
  BatchRecord batch;
  batch.id = row.column_int64(0);
  batch.file_name = row.column_text(1);
  batch.checksum = row.column_text(2);
  batch.state = parse_batch_state(row.column_text(3));
  batch.attempts = row.column_int64(4);
  for (std::size_t i = 0; i < kSampleStatusCount; ++i) {
    batch.counts.by_status[i] = row.column_int64(5 + static_cast<int>(i));
  }
  batch.error = row.column_text(10);
  batch.created_at = row.column_text(11);
  batch.started_at = row.column_optional_text(12);
  batch.finished_at = row.column_optional_text(13);
  return batch;
}

std::optional<SampleRecord> find_one_sample(Database& db, const char* sql, std::string_view key) {
  StatementScope query(db.cached(sql));
  query->bind_all(key);
  if (!query->step()) {
    return std::nullopt;
  }
  return read_sample(*query);
}

std::optional<std::string_view> optional_text(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  return std::string_view(text);
}

void check_decision(const Decision& decision) {
  const std::string_view status = to_string(decision.status);
  if (is_duplicate(decision.status)) {
    WINNOW_THROW_IF_NOT(decision.duplicate_of.has_value(),
                        "status {} needs duplicate_of (the original sample's id)", status);
  } else {
    WINNOW_THROW_IF_NOT(!decision.duplicate_of.has_value(),
                        "status {} cannot have duplicate_of ({}); only duplicates point at an "
                        "original",
                        status, decision.duplicate_of.value_or(0));
  }
}

void check_finite(const std::optional<double>& value, const char* what) {
  WINNOW_THROW_IF_NOT(!value || std::isfinite(*value), "{} must be finite, got {}", what,
                      value.value_or(0.0));
}

void append_event(Database& db, std::optional<std::int64_t> sample_id,
                  std::optional<std::int64_t> batch_id, const char* kind,
                  std::optional<SampleStatus> decision, std::string_view reason,
                  const std::string& details_json, const std::string& now) {
  std::optional<std::string_view> decision_name;
  if (decision) {
    decision_name = to_string(*decision);
  }
  db.cached(kInsertEvent)
      .bind_all(sample_id, batch_id, std::string_view(kind), decision_name, reason,
                optional_text(details_json), now)
      .run();
}

// Merges contributor ids into the committed cache once nothing can roll
// them back any more (no enclosing transaction is open).
template <typename Ids>
void keep_if_committed(const Database& db, Ids& fresh, Ids& cache) {
  if (!db.in_transaction()) {
    for (std::size_t kind = 0; kind < cache.size(); ++kind) {
      cache[kind].merge(fresh[kind]);
    }
  }
}

}  // namespace

struct MetadataStore::SampleStatements {
  explicit SampleStatements(Database& db)
      : sample(db.cached(kInsertSample)),
        annotation(db.cached(kInsertAnnotation)),
        event(db.cached(kInsertEvent)) {}
  Statement& sample;
  Statement& annotation;
  Statement& event;
};

MetadataStore::MetadataStore(std::string path, const DatabaseOptions& options)
    : db_(std::move(path), options) {}

// --- samples -----------------------------------------------------------------

std::int64_t MetadataStore::contributor_id(int kind, const std::string& name,
                                           ContributorIds& fresh) {
  const auto k = static_cast<std::size_t>(kind);
  if (auto found = contributor_ids_[k].find(name); found != contributor_ids_[k].end()) {
    return found->second;
  }
  if (auto found = fresh[k].find(name); found != fresh[k].end()) {
    return found->second;
  }
  const std::string_view kind_name = contributor_kind_name(kind);
  std::int64_t id = 0;
  {
    StatementScope select(db_.cached("SELECT id FROM contributors WHERE kind = ?1 AND name = ?2"));
    select->bind_all(kind_name, name);
    if (select->step()) {
      id = select->column_int64(0);
    }
  }
  if (id == 0) {
    StatementScope insert(db_.cached(
        "INSERT INTO contributors (name, kind, created_at) VALUES (?1, ?2, ?3) RETURNING id"));
    insert->bind_all(name, kind_name, utc_timestamp_now());
    WINNOW_THROW_IF_NOT(insert->step(), "{}: inserting {} '{}' returned no id", db_.path(),
                        kind_name, name);
    id = insert->column_int64(0);
    insert->run();
  }
  fresh[k].emplace(name, id);
  return id;
}

std::int64_t MetadataStore::insert_one(const NewSample& sample, const std::string& now,
                                       SampleStatements& statements, ContributorIds& fresh) {
  WINNOW_THROW_IF_NOT(!sample.external_key.empty(), "the external key is empty");
  WINNOW_THROW_IF_NOT(!sample.content_hash.empty(), "the content hash is empty");
  check_decision(sample.decision);
  check_finite(sample.label_quality, "label_quality");
  check_finite(sample.gain, "gain");

  std::optional<std::int64_t> source_id;
  if (!sample.source.empty()) {
    source_id = contributor_id(kSource, sample.source, fresh);
  }
  statements.sample
      .bind_all(sample.external_key, sample.content_hash, sample.label, source_id,
                to_string(sample.decision.status), sample.decision.duplicate_of,
                sample.label_quality, sample.gain, sample.batch_id, now)
      .run();
  if (db_.changes() == 0) {  // ON CONFLICT DO NOTHING inserted no row
    const auto existing = find_by_external_key(sample.external_key);
    WINNOW_THROW("external key '{}' already exists (sample {})", sample.external_key,
                 existing ? existing->id : 0);
  }
  const std::int64_t id = db_.last_insert_rowid();
  for (const NewAnnotation& annotation : sample.annotations) {
    std::optional<std::int64_t> annotator_id;
    if (!annotation.annotator.empty()) {
      annotator_id = contributor_id(kAnnotator, annotation.annotator, fresh);
    }
    statements.annotation.bind_all(id, annotator_id, annotation.label, now).run();
  }
  statements.event
      .bind_all(id, sample.batch_id, std::string_view(kEventIngest),
                to_string(sample.decision.status), sample.decision.reason,
                optional_text(sample.decision.details_json), now)
      .run();
  return id;
}

std::int64_t MetadataStore::insert_sample(const NewSample& sample) {
  return insert_samples({sample}).front();
}

std::vector<std::int64_t> MetadataStore::insert_samples(const std::vector<NewSample>& samples) {
  std::vector<std::int64_t> ids;
  ids.reserve(samples.size());
  ContributorIds fresh;
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_, Transaction::Nested::join);
  SampleStatements statements(db_);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    try {
      ids.push_back(insert_one(samples[i], now, statements, fresh));
    } catch (const Error& error) {
      WINNOW_THROW("{}: cannot record sample '{}' (item {} of {}); {}: {}", db_.path(),
                   samples[i].external_key, i + 1, samples.size(),
                   transaction.nested()
                       ? "the enclosing transaction holds the items before it and must roll back"
                       : fmt::format("nothing of the {} was written", samples.size()),
                   error.what());
    }
  }
  transaction.commit();
  keep_if_committed(db_, fresh, contributor_ids_);
  return ids;
}

std::optional<SampleRecord> MetadataStore::find_sample(std::int64_t id) {
  StatementScope query(db_.cached(kFindSampleById));
  query->bind_all(id);
  if (!query->step()) {
    return std::nullopt;
  }
  return read_sample(*query);
}

std::optional<SampleRecord> MetadataStore::find_by_external_key(std::string_view external_key) {
  return find_one_sample(db_, kFindSampleByKey, external_key);
}

// Epoch by epoch, oldest first, so the first match has the lowest id: a probe
// per 262,144 ids (4 at a million samples), against inserts that stay in the
// newest epoch's part of the index. Only epochs that hold samples are probed:
// ids are dense as the store hands them out, but one far ahead in a file
// written by other means must not cost 2^44 empty probes.
std::optional<SampleRecord> MetadataStore::find_by_content_hash(std::string_view content_hash) {
  constexpr std::int64_t kEpochIds = std::int64_t{1} << kContentHashEpochBits;
  constexpr std::int64_t kLastEpoch = std::numeric_limits<std::int64_t>::max() / kEpochIds;
  // The epoch of the first id at or after ?1, by the index's own expression.
  StatementScope next_epoch(db_.cached("SELECT min(id) >> 18 FROM samples WHERE id >= ?1"));
  StatementScope query(db_.cached(kFindSampleByHashInEpoch));
  std::int64_t from = std::numeric_limits<std::int64_t>::min();
  while (true) {
    next_epoch->bind_all(from);
    WINNOW_THROW_IF_NOT(next_epoch->step(), "{}: min(id) of samples returned no row", db_.path());
    if (next_epoch->is_null(0)) return std::nullopt;
    const std::int64_t epoch = next_epoch->column_int64(0);
    query->bind_all(content_hash, epoch);
    if (query->step()) return read_sample(*query);
    if (epoch >= kLastEpoch) return std::nullopt;
    from = (epoch + 1) * kEpochIds;
  }
}

std::vector<AnnotationRecord> MetadataStore::annotations_of(std::int64_t sample_id) {
  StatementScope query(db_.cached(
      "SELECT a.id, a.sample_id, c.name, a.label, a.created_at FROM annotations a "
      "LEFT JOIN contributors c ON c.id = a.annotator_id WHERE a.sample_id = ?1 ORDER BY a.id"));
  query->bind_all(sample_id);
  std::vector<AnnotationRecord> annotations;
  while (query->step()) {
    AnnotationRecord& annotation = annotations.emplace_back();
    annotation.id = query->column_int64(0);
    annotation.sample_id = query->column_int64(1);
    annotation.annotator = query->column_text(2);
    annotation.label = query->column_int64(3);
    annotation.created_at = query->column_text(4);
  }
  return annotations;
}

void MetadataStore::add_annotation(std::int64_t sample_id, const NewAnnotation& annotation) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_, Transaction::Nested::join);
  ContributorIds fresh;
  std::optional<std::int64_t> annotator;
  if (!annotation.annotator.empty())
    annotator = contributor_id(kAnnotator, annotation.annotator, fresh);
  db_.cached(kInsertAnnotation).bind_all(sample_id, annotator, annotation.label, now).run();
  transaction.commit();
  keep_if_committed(db_, fresh, contributor_ids_);
}

void MetadataStore::set_annotation_label(std::int64_t annotation_id, std::int64_t label) {
  Transaction transaction(db_, Transaction::Nested::join);
  StatementScope update(db_.cached("UPDATE annotations SET label = ?2 WHERE id = ?1 RETURNING id"));
  update->bind_all(annotation_id, label);
  WINNOW_THROW_IF_NOT(update->step(), "{}: no annotation with id {}", db_.path(), annotation_id);
  update->run();
  transaction.commit();
}

void MetadataStore::append_note(std::int64_t sample_id, std::optional<std::int64_t> batch_id,
                                const char* kind, std::string_view reason,
                                const std::string& details_json) {
  Transaction transaction(db_, Transaction::Nested::join);
  append_event(db_, sample_id, batch_id, kind, std::nullopt, reason, details_json,
               utc_timestamp_now());
  transaction.commit();
}

void MetadataStore::update_status(std::int64_t sample_id, const Decision& decision,
                                  std::optional<std::int64_t> batch_id) {
  try {
    check_decision(decision);
  } catch (const Error& error) {
    WINNOW_THROW("{}: cannot update sample {}: {}", db_.path(), sample_id, error.what());
  }
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  {
    StatementScope update(db_.cached(
        "UPDATE samples SET status = ?2, duplicate_of = ?3, updated_at = ?4 WHERE id = ?1 "
        "RETURNING id"));
    update->bind_all(sample_id, to_string(decision.status), decision.duplicate_of, now);
    WINNOW_THROW_IF_NOT(update->step(), "{}: cannot update status: no sample with id {}",
                        db_.path(), sample_id);
    update->run();
  }
  append_event(db_, sample_id, batch_id, kEventRevisit, decision.status, decision.reason,
               decision.details_json, now);
  transaction.commit();
}

void MetadataStore::record_review(const ReviewRecord& review, const Decision& decision) {
  const std::int64_t id = review.sample_id;
  try {
    check_decision(decision);
    WINNOW_THROW_IF_NOT((review.verdict == Verdict::relabel) == review.label.has_value(),
                        "a relabel verdict, and only one, names a label");
  } catch (const Error& error) {
    WINNOW_THROW("{}: cannot record the review of sample {}: {}", db_.path(), id, error.what());
  }
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_, Transaction::Nested::join);
  {
    StatementScope update(db_.cached(
        "UPDATE samples SET status = ?2, duplicate_of = ?3, label = coalesce(?4, label), "
        "updated_at = ?5 WHERE id = ?1 RETURNING id"));
    update->bind_all(id, to_string(decision.status), decision.duplicate_of, review.label, now);
    WINNOW_THROW_IF_NOT(update->step(), "{}: cannot record a review: no sample with id {}",
                        db_.path(), id);
    update->run();
  }
  append_event(db_, id, std::nullopt, kEventReview, decision.status, decision.reason,
               decision.details_json, now);
  db_.cached(
         "INSERT INTO reviews (sample_id, verdict, label, reviewer, note, created_at) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (sample_id) DO UPDATE SET "
         "verdict = excluded.verdict, label = excluded.label, reviewer = excluded.reviewer, "
         "note = excluded.note, created_at = excluded.created_at")
      .bind_all(id, to_string(review.verdict), review.label, std::string_view(review.reviewer),
                std::string_view(review.note), now)
      .run();
  transaction.commit();
}

namespace {

constexpr const char* kReviewColumns =
    "SELECT sample_id, verdict, label, reviewer, note, created_at FROM reviews ";

ReviewRecord read_review(const Statement& row, const std::string& db_path) {
  ReviewRecord review;
  review.sample_id = row.column_int64(0);
  const std::string verdict = row.column_text(1);
  const std::optional<Verdict> parsed = parse_verdict(verdict);
  WINNOW_THROW_IF_NOT(parsed, "{}: sample {} has an unknown review verdict '{}'", db_path,
                      review.sample_id, verdict);
  review.verdict = *parsed;
  review.label = row.column_optional_int64(2);
  review.reviewer = row.column_text(3);
  review.note = row.column_text(4);
  review.created_at = row.column_text(5);
  return review;
}

}  // namespace

std::optional<ReviewRecord> MetadataStore::review_of(std::int64_t sample_id) {
  StatementScope query(db_.cached(std::string(kReviewColumns) + "WHERE sample_id = ?1"));
  query->bind_all(sample_id);
  if (!query->step()) return std::nullopt;
  return read_review(*query, db_.path());
}

std::vector<ReviewRecord> MetadataStore::reviews() {
  StatementScope query(db_.cached(std::string(kReviewColumns) + "ORDER BY sample_id"));
  query->bind_all();
  std::vector<ReviewRecord> reviews;
  while (query->step()) reviews.push_back(read_review(*query, db_.path()));
  return reviews;
}

void MetadataStore::relabel(std::int64_t sample_id, std::int64_t label, std::string_view reason,
                            const std::string& details_json) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  std::optional<SampleStatus> status;
  {
    StatementScope update(db_.cached(
        "UPDATE samples SET label = ?2, updated_at = ?3 WHERE id = ?1 RETURNING status"));
    update->bind_all(sample_id, label, now);
    WINNOW_THROW_IF_NOT(update->step(), "{}: cannot relabel: no sample with id {}", db_.path(),
                        sample_id);
    status = parse_sample_status(update->column_text(0));
    update->run();
  }
  append_event(db_, sample_id, std::nullopt, kEventRelabel, status, reason, details_json, now);
  transaction.commit();
}

void MetadataStore::set_scores(const char* update_sql, const char* what,
                               const std::vector<SampleScore>& scores) {
  for (const SampleScore& score : scores) {
    WINNOW_THROW_IF_NOT(std::isfinite(score.value),
                        "{}: cannot set {}: sample {} has non-finite value {}", db_.path(), what,
                        score.sample_id, score.value);
  }
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_, Transaction::Nested::join);
  StatementScope update(db_.cached(update_sql));
  for (const SampleScore& score : scores) {
    update->bind_all(score.sample_id, score.value, now);
    WINNOW_THROW_IF_NOT(update->step(), "{}: cannot set {}: no sample with id {}", db_.path(), what,
                        score.sample_id);
    update->run();
  }
  transaction.commit();
}

void MetadataStore::set_gains(const std::vector<SampleScore>& gains) {
  set_scores("UPDATE samples SET gain = ?2, updated_at = ?3 WHERE id = ?1 RETURNING id", "gain",
             gains);
}

void MetadataStore::set_label_qualities(const std::vector<SampleScore>& qualities) {
  set_scores("UPDATE samples SET label_quality = ?2, updated_at = ?3 WHERE id = ?1 RETURNING id",
             "label_quality", qualities);
}

// --- reports -----------------------------------------------------------------

StatusCounts MetadataStore::count_by_status() {
  StatementScope query(db_.cached("SELECT status, count(*) FROM samples GROUP BY status"));
  query->bind_all();
  StatusCounts counts;
  while (query->step()) {
    counts[parse_sample_status(query->column_text(0))] = query->column_int64(1);
  }
  return counts;
}

std::vector<MetadataStore::LabelQualitySum> MetadataStore::label_quality_by_label() {
  // Kept by triggers (schema version 9), in fixed point.
  StatementScope query(
      db_.cached("SELECT label, samples, quality_fixed FROM label_quality_sums "
                 "WHERE samples > 0 ORDER BY label"));
  query->bind_all();
  std::vector<LabelQualitySum> sums;
  while (query->step()) {
    sums.push_back({query->column_int64(0), query->column_int64(1),
                    static_cast<double>(query->column_int64(2)) / kLabelQualityScale});
  }
  return sums;
}

std::int64_t MetadataStore::count_label_conflicts() {
  StatementScope query(
      db_.cached("SELECT count(*) FROM samples d JOIN samples o ON o.id = d.duplicate_of "
                 "WHERE d.label IS NOT NULL AND o.label IS NOT NULL AND d.label <> o.label"));
  query->bind_all();
  WINNOW_THROW_IF_NOT(query->step(), "{}: counting label conflicts returned no row", db_.path());
  return query->column_int64(0);
}

std::vector<std::string> MetadataStore::quick_check(int max_problems) {
  Statement query(db_, fmt::format("PRAGMA quick_check({})", std::max(1, max_problems)));
  std::vector<std::string> problems;
  while (query.step()) {
    // A row may hold several problems, one a line, after a heading line.
    std::string text = query.column_text(0);
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      std::string line = text.substr(start, end - start);
      if (!line.empty() && line != "ok" && line.rfind("*** in database", 0) != 0) {
        problems.push_back(std::move(line));
      }
      start = end + 1;
    }
  }
  return problems;
}

bool MetadataStore::has_samples() {
  StatementScope query(db_.cached("SELECT EXISTS (SELECT 1 FROM samples)"));
  query->bind_all();
  WINNOW_THROW_IF_NOT(query->step(), "{}: checking for samples returned no row", db_.path());
  return query->column_int64(0) != 0;
}

std::map<std::string, StatusCounts> MetadataStore::count_by_source() {
  StatementScope query(
      db_.cached("SELECT c.name, s.status, count(*) FROM samples s "
                 "LEFT JOIN contributors c ON c.id = s.source_id GROUP BY s.source_id, s.status"));
  query->bind_all();
  std::map<std::string, StatusCounts> counts;
  while (query->step()) {
    counts[query->column_text(0)][parse_sample_status(query->column_text(1))] =
        query->column_int64(2);
  }
  return counts;
}

std::vector<AcceptedSample> MetadataStore::accepted_samples() {
  std::vector<AcceptedSample> samples;
  for_each_accepted_sample([&](const AcceptedSample& s) { samples.push_back(s); });
  return samples;
}

void MetadataStore::for_each_accepted_sample(
    const std::function<void(const AcceptedSample&)>& visit) {
  // Not the cached statement: `visit` may run other queries, even this one.
  Statement query(db_,
                  "SELECT id, external_key, label,"
                  " EXISTS (SELECT 1 FROM curation_vectors v WHERE v.sample_id = samples.id)"
                  " FROM samples WHERE status = 'accepted' ORDER BY id");
  query.bind_all();
  AcceptedSample sample;
  while (query.step()) {
    sample.id = query.column_int64(0);
    sample.external_key = query.column_text(1);
    sample.label = query.column_optional_int64(2);
    sample.has_vector = query.column_int64(3) != 0;
    visit(sample);
  }
}

void MetadataStore::for_each_sample(const std::function<void(const SampleRecord&)>& visit,
                                    std::optional<SampleStatus> only) {
  // Not the cached statement: `visit` may run other queries, even this one.
  Statement query(db_, kEachSample);
  std::optional<std::string_view> status;
  if (only) {
    status = to_string(*only);
  }
  query.bind_all(status);
  while (query.step()) {
    visit(read_sample(query));
  }
}

void MetadataStore::for_each_sample_identity(
    std::int64_t after_id, const std::function<void(const SampleIdentity&)>& visit) {
  Statement query(db_,
                  "SELECT id, external_key, content_hash FROM samples WHERE id > ? ORDER BY id");
  query.bind_all(after_id);
  SampleIdentity identity;
  while (query.step()) {
    identity.id = query.column_int64(0);
    identity.external_key = query.column_text(1);
    identity.content_hash = query.column_text(2);
    visit(identity);
  }
}

void MetadataStore::for_each_sample_with_decision(
    const std::function<void(const SampleRecord&, const DecisionText&)>& visit,
    std::optional<SampleStatus> only) {
  Statement query(db_, kEachSampleWithDecision);
  std::optional<std::string_view> status;
  if (only) status = to_string(*only);
  query.bind_all(status);
  DecisionText decision;
  while (query.step()) {
    decision.reason = query.column_text(12);
    decision.details_json = query.column_text(13);
    visit(read_sample(query), decision);
  }
}

std::vector<EventRecord> MetadataStore::events_of(std::int64_t sample_id) {
  StatementScope query(db_.cached(std::string(kEventColumns) + "WHERE sample_id = ?1 ORDER BY id"));
  query->bind_all(sample_id);
  std::vector<EventRecord> events;
  while (query->step()) {
    events.push_back(read_event(*query));
  }
  return events;
}

std::vector<EventRecord> MetadataStore::events_of_batch(std::int64_t batch_id) {
  StatementScope query(db_.cached(std::string(kEventColumns) + "WHERE batch_id = ?1 ORDER BY id"));
  query->bind_all(batch_id);
  std::vector<EventRecord> events;
  while (query->step()) {
    events.push_back(read_event(*query));
  }
  return events;
}

void MetadataStore::for_each_annotation(const std::function<void(const AnnotationRow&)>& visit) {
  // Not a cached statement: `visit` may run other queries.
  Statement query(db_,
                  "SELECT sample_id, annotator_id, label, id FROM annotations "
                  "ORDER BY sample_id, id");
  query.bind_all();
  AnnotationRow row;
  while (query.step()) {
    row.sample_id = query.column_int64(0);
    row.annotator_id = query.column_optional_int64(1);
    row.label = query.column_int64(2);
    row.id = query.column_int64(3);
    visit(row);
  }
}

std::optional<std::int64_t> MetadataStore::last_annotation_by(const std::string& timestamp) {
  StatementScope bounds(db_.cached("SELECT min(id), max(id) FROM annotations"));
  bounds->bind_all();
  WINNOW_THROW_IF_NOT(bounds->step(), "{}: min(id) of annotations returned no row", db_.path());
  if (bounds->is_null(0)) return std::nullopt;
  std::int64_t low = bounds->column_int64(0), high = bounds->column_int64(1);
  StatementScope at(
      db_.cached("SELECT id, created_at FROM annotations WHERE id >= ?1 ORDER BY id LIMIT 1"));
  const auto written_by = [&](std::int64_t from, std::int64_t& id) {
    at->bind_all(from);
    WINNOW_THROW_IF_NOT(at->step(), "{}: no annotation from id {}", db_.path(), from);
    id = at->column_int64(0);
    return at->column_text(1) <= timestamp;
  };
  std::int64_t id = 0;
  if (!written_by(low, id)) return std::nullopt;
  std::optional<std::int64_t> found = id;
  // Invariant: an annotation at or after `low` was written by then.
  while (low < high) {
    const std::int64_t mid = low + (high - low + 1) / 2;
    if (written_by(mid, id)) {
      found = id;
      low = id;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

void MetadataStore::for_each_sample_event(const std::function<void(const EventRecord&)>& visit,
                                          SampleStatus decision) {
  Statement query(db_, std::string(kEventColumns) +
                           "WHERE sample_id IS NOT NULL AND decision = ?1 ORDER BY id");
  query.bind_all(to_string(decision));
  while (query.step()) {
    visit(read_event(query));
  }
}

std::vector<MetadataStore::Contributor> MetadataStore::contributors() {
  StatementScope query(db_.cached("SELECT id, name, kind FROM contributors ORDER BY id"));
  query->bind_all();
  std::vector<Contributor> contributors;
  while (query->step()) {
    contributors.push_back({query->column_int64(0), query->column_text(1), query->column_text(2)});
  }
  return contributors;
}

std::vector<BatchRecord> MetadataStore::all_batches() {
  StatementScope query(db_.cached(std::string(kBatchColumns) + "ORDER BY id"));
  query->bind_all();
  std::vector<BatchRecord> batches;
  while (query->step()) {
    batches.push_back(read_batch(*query));
  }
  return batches;
}

// --- ingest batches ----------------------------------------------------------

std::optional<BatchRecord> MetadataStore::find_batch(std::int64_t batch_id) {
  StatementScope query(db_.cached(std::string(kBatchColumns) + "WHERE id = ?1"));
  query->bind_all(batch_id);
  if (!query->step()) {
    return std::nullopt;
  }
  return read_batch(*query);
}

std::optional<BatchRecord> MetadataStore::find_batch_by_checksum(std::string_view checksum) {
  StatementScope query(db_.cached(std::string(kBatchColumns) + "WHERE checksum = ?1"));
  query->bind_all(checksum);
  if (!query->step()) {
    return std::nullopt;
  }
  return read_batch(*query);
}

std::vector<BatchRecord> MetadataStore::batches_in_state(BatchState state) {
  StatementScope query(db_.cached(std::string(kBatchColumns) + "WHERE state = ?1 ORDER BY id"));
  query->bind_all(to_string(state));
  std::vector<BatchRecord> batches;
  while (query->step()) {
    batches.push_back(read_batch(*query));
  }
  return batches;
}

BatchRecord MetadataStore::require_batch(std::int64_t batch_id) {
  std::optional<BatchRecord> batch = find_batch(batch_id);
  WINNOW_THROW_IF_NOT(batch.has_value(), "{}: no ingest batch with id {}", db_.path(), batch_id);
  return std::move(*batch);
}

void MetadataStore::append_batch_event(std::int64_t batch_id, const char* kind,
                                       std::string_view reason, const std::string& now) {
  append_event(db_, std::nullopt, batch_id, kind, std::nullopt, reason, std::string(), now);
}

BatchRecord MetadataStore::register_batch(std::string_view file_name, std::string_view checksum) {
  WINNOW_THROW_IF_NOT(!file_name.empty(), "{}: cannot register a batch without a file name",
                      db_.path());
  WINNOW_THROW_IF_NOT(!checksum.empty(), "{}: cannot register batch '{}' without a checksum",
                      db_.path(), file_name);
  Transaction transaction(db_);
  db_.cached(
         "INSERT INTO ingest_batches (file_name, checksum, created_at) VALUES (?1, ?2, ?3) "
         "ON CONFLICT (checksum) DO NOTHING")
      .bind_all(file_name, checksum, utc_timestamp_now())
      .run();
  std::optional<BatchRecord> batch = find_batch_by_checksum(checksum);
  WINNOW_THROW_IF_NOT(batch.has_value(), "{}: batch '{}' vanished after registering", db_.path(),
                      file_name);
  transaction.commit();
  return std::move(*batch);
}

BatchRecord MetadataStore::start_batch(std::int64_t batch_id) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  const BatchRecord batch = require_batch(batch_id);
  WINNOW_THROW_IF_NOT(batch.state != BatchState::done,
                      "{}: batch {} ('{}', checksum {}) is already done; a manifest is ingested "
                      "once",
                      db_.path(), batch.id, batch.file_name, batch.checksum);
  db_.cached(
         "UPDATE ingest_batches SET state = 'running', attempts = attempts + 1, "
         "started_at = ?2, finished_at = NULL, error = '' WHERE id = ?1")
      .bind_all(batch_id, now)
      .run();
  append_batch_event(batch_id, kEventBatchStarted,
                     fmt::format("attempt {} of '{}'", batch.attempts + 1, batch.file_name), now);
  BatchRecord started = require_batch(batch_id);
  transaction.commit();
  return started;
}

BatchRecord MetadataStore::finish_batch(std::int64_t batch_id) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  const BatchRecord batch = require_batch(batch_id);
  WINNOW_THROW_IF_NOT(batch.state == BatchState::running,
                      "{}: cannot finish batch {} ('{}'): it is {}, not running", db_.path(),
                      batch.id, batch.file_name, to_string(batch.state));
  StatusCounts counts;
  {
    StatementScope query(
        db_.cached("SELECT status, count(*) FROM samples WHERE batch_id = ?1 GROUP BY status"));
    query->bind_all(batch_id);
    while (query->step()) {
      counts[parse_sample_status(query->column_text(0))] = query->column_int64(1);
    }
  }
  db_.cached(
         "UPDATE ingest_batches SET state = 'done', finished_at = ?2, n_accepted = ?3, "
         "n_duplicate_exact = ?4, n_duplicate_near = ?5, n_label_issue = ?6, n_rejected = ?7 "
         "WHERE id = ?1")
      .bind_all(batch_id, now, counts[SampleStatus::accepted],
                counts[SampleStatus::duplicate_exact], counts[SampleStatus::duplicate_near],
                counts[SampleStatus::label_issue], counts[SampleStatus::rejected])
      .run();
  append_batch_event(batch_id, kEventBatchDone, fmt::format("{} samples", counts.total()), now);
  BatchRecord done = require_batch(batch_id);
  transaction.commit();
  return done;
}

std::int64_t MetadataStore::record_batch_interrupted(std::int64_t batch_id,
                                                     std::string_view reason) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  require_batch(batch_id);
  append_batch_event(batch_id, kEventBatchInterrupted, reason, now);
  std::int64_t count = 0;
  {
    StatementScope query(
        db_.cached("SELECT count(*) FROM events WHERE batch_id = ?1 AND kind = ?2"));
    query->bind_all(batch_id, std::string_view(kEventBatchInterrupted));
    WINNOW_THROW_IF_NOT(query->step(), "{}: counting the interruptions of batch {} returned no row",
                        db_.path(), batch_id);
    count = query->column_int64(0);
  }
  transaction.commit();
  return count;
}

BatchRecord MetadataStore::fail_batch(std::int64_t batch_id, std::string_view error) {
  const std::string now = utc_timestamp_now();
  Transaction transaction(db_);
  const BatchRecord batch = require_batch(batch_id);
  WINNOW_THROW_IF_NOT(batch.state == BatchState::running || batch.state == BatchState::pending,
                      "{}: cannot fail batch {} ('{}'): it is {}", db_.path(), batch.id,
                      batch.file_name, to_string(batch.state));
  db_.cached(
         "UPDATE ingest_batches SET state = 'failed', finished_at = ?2, error = ?3 "
         "WHERE id = ?1")
      .bind_all(batch_id, now, error)
      .run();
  append_batch_event(batch_id, kEventBatchFailed, error, now);
  BatchRecord failed = require_batch(batch_id);
  transaction.commit();
  return failed;
}

// --- key/value metadata --------------------------------------------------------

void MetadataStore::set_meta(std::string_view key, std::string_view value) {
  WINNOW_THROW_IF_NOT(!key.empty(), "{}: meta key is empty", db_.path());
  Transaction transaction(db_);
  db_.cached(
         "INSERT INTO meta (key, value) VALUES (?1, ?2) "
         "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
      .bind_all(key, value)
      .run();
  transaction.commit();
}

void MetadataStore::record_writer(bool creating) {
  Transaction transaction(db_);
  if (creating) set_meta(kCreatedByKey, kVersion);
  set_meta(kWrittenByKey, kVersion);
  transaction.commit();
}

std::optional<std::string> MetadataStore::get_meta(std::string_view key) {
  StatementScope query(db_.cached("SELECT value FROM meta WHERE key = ?1"));
  query->bind_all(key);
  if (!query->step()) {
    return std::nullopt;
  }
  return query->column_text(0);
}

}  // namespace winnow::store
