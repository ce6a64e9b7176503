#include "winnow/store/migrations.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sqlite3.h>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"

namespace winnow::store {
namespace {

// Timestamps default to ISO-8601 UTC with milliseconds, like the C++ side.
#define WINNOW_NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

// Version 1: every table, index and trigger of the first release.
void create_initial_schema(Database& db) {
  const char* const statements[] = {
      // Small key/value settings: index file path and type, embedder config...
      "CREATE TABLE meta ("
      "  key   TEXT PRIMARY KEY NOT NULL,"
      "  value TEXT NOT NULL"
      ") WITHOUT ROWID",

      // Where samples and labels come from. A name is unique per kind.
      "CREATE TABLE contributors ("
      "  id         INTEGER PRIMARY KEY,"
      "  name       TEXT NOT NULL,"
      "  kind       TEXT NOT NULL CHECK (kind IN ('source', 'annotator')),"
      "  created_at TEXT NOT NULL DEFAULT " WINNOW_NOW
      ","
      "  UNIQUE (kind, name)"
      ")",

      // One per manifest; the checksum makes processing happen exactly once.
      "CREATE TABLE ingest_batches ("
      "  id                INTEGER PRIMARY KEY,"
      "  file_name         TEXT NOT NULL,"
      "  checksum          TEXT NOT NULL UNIQUE,"
      "  state             TEXT NOT NULL DEFAULT 'pending'"
      "                    CHECK (state IN ('pending', 'running', 'done', 'failed')),"
      "  attempts          INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),"
      "  n_accepted        INTEGER NOT NULL DEFAULT 0,"
      "  n_duplicate_exact INTEGER NOT NULL DEFAULT 0,"
      "  n_duplicate_near  INTEGER NOT NULL DEFAULT 0,"
      "  n_label_issue     INTEGER NOT NULL DEFAULT 0,"
      "  n_rejected        INTEGER NOT NULL DEFAULT 0,"
      "  error             TEXT NOT NULL DEFAULT '',"
      "  created_at        TEXT NOT NULL DEFAULT " WINNOW_NOW
      ","
      "  started_at        TEXT,"
      "  finished_at       TEXT"
      ")",
      "CREATE INDEX ingest_batches_state ON ingest_batches (state)",

      "CREATE TABLE samples ("
      "  id            INTEGER PRIMARY KEY,"
      "  external_key  TEXT NOT NULL UNIQUE,"
      "  content_hash  TEXT NOT NULL,"
      "  label         INTEGER,"
      "  source_id     INTEGER REFERENCES contributors (id),"
      "  status        TEXT NOT NULL CHECK (status IN ('accepted', 'duplicate_exact',"
      "                'duplicate_near', 'label_issue', 'rejected')),"
      "  duplicate_of  INTEGER REFERENCES samples (id),"
      "  label_quality REAL,"
      "  gain          REAL,"
      "  batch_id      INTEGER REFERENCES ingest_batches (id),"
      "  created_at    TEXT NOT NULL DEFAULT " WINNOW_NOW
      ","
      "  updated_at    TEXT NOT NULL DEFAULT " WINNOW_NOW
      ","
      // A duplicate points at its original, and only a duplicate does.
      "  CHECK ((status IN ('duplicate_exact', 'duplicate_near')) = (duplicate_of IS NOT NULL)),"
      "  CHECK (duplicate_of IS NULL OR duplicate_of <> id)"
      ")",
      "CREATE INDEX samples_content_hash ON samples (content_hash)",
      "CREATE INDEX samples_status ON samples (status)",
      "CREATE INDEX samples_source ON samples (source_id)",
      "CREATE INDEX samples_batch ON samples (batch_id)",
      "CREATE INDEX samples_duplicate_of ON samples (duplicate_of)",
      "CREATE TRIGGER samples_no_delete BEFORE DELETE ON samples BEGIN"
      "  SELECT RAISE(ABORT, 'samples are never deleted; record a new status instead');"
      " END",

      // A sample may have several annotations, one per annotator and round.
      "CREATE TABLE annotations ("
      "  id           INTEGER PRIMARY KEY,"
      "  sample_id    INTEGER NOT NULL REFERENCES samples (id),"
      "  annotator_id INTEGER REFERENCES contributors (id),"
      "  label        INTEGER NOT NULL,"
      "  created_at   TEXT NOT NULL DEFAULT " WINNOW_NOW ")",
      "CREATE INDEX annotations_sample ON annotations (sample_id)",
      "CREATE INDEX annotations_annotator ON annotations (annotator_id)",

      // Append-only log of every decision.
      "CREATE TABLE events ("
      "  id         INTEGER PRIMARY KEY,"
      "  sample_id  INTEGER REFERENCES samples (id),"
      "  batch_id   INTEGER REFERENCES ingest_batches (id),"
      "  kind       TEXT NOT NULL,"
      "  decision   TEXT CHECK (decision IS NULL OR decision IN ('accepted',"
      "             'duplicate_exact', 'duplicate_near', 'label_issue', 'rejected')),"
      "  reason     TEXT NOT NULL DEFAULT '',"
      "  details    TEXT CHECK (details IS NULL OR json_valid(details)),"
      "  created_at TEXT NOT NULL DEFAULT " WINNOW_NOW ")",
      "CREATE INDEX events_sample ON events (sample_id)",
      "CREATE INDEX events_batch ON events (batch_id)",
      "CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN"
      "  SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed');"
      " END",
      "CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN"
      "  SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed');"
      " END",
  };
  for (const char* sql : statements) {
    db.exec(sql);
  }
}

#undef WINNOW_NOW

// Version 2: the curation pipeline's vectors and contents of accepted samples
// (embedding: dim float32 little-endian; content: text bytes, pixels, or the
// resolved path). Builds before this migration created the table themselves
// when a dataset was initialised, with the same definition: IF NOT EXISTS
// keeps such a table and its rows.
void create_curation_vectors(Database& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS curation_vectors ("
      " sample_id INTEGER PRIMARY KEY REFERENCES samples(id),"
      " embedding BLOB NOT NULL, kind TEXT NOT NULL, width INTEGER NOT NULL,"
      " height INTEGER NOT NULL, content BLOB NOT NULL)");
}

// Version 3: image-quality scores and issues of the samples whose file was a
// decoded image (ImageQualityTable; docs/images.md). One score and one 0/1
// flag per issue; a NULL score: the issue was not judged.
void create_image_quality(Database& db) {
  db.exec(
      "CREATE TABLE image_quality ("
      " sample_id INTEGER PRIMARY KEY REFERENCES samples(id),"
      " width INTEGER NOT NULL CHECK (width > 0),"
      " height INTEGER NOT NULL CHECK (height > 0),"
      " blurry_score REAL, dark_score REAL, bright_score REAL, low_information_score REAL,"
      " grayscale_score REAL, odd_aspect_ratio_score REAL, odd_size_score REAL,"
      " blurry INTEGER NOT NULL CHECK (blurry IN (0, 1)),"
      " dark INTEGER NOT NULL CHECK (dark IN (0, 1)),"
      " bright INTEGER NOT NULL CHECK (bright IN (0, 1)),"
      " low_information INTEGER NOT NULL CHECK (low_information IN (0, 1)),"
      " grayscale INTEGER NOT NULL CHECK (grayscale IN (0, 1)),"
      " odd_aspect_ratio INTEGER NOT NULL CHECK (odd_aspect_ratio IN (0, 1)),"
      " odd_size INTEGER NOT NULL CHECK (odd_size IN (0, 1)))");
}

// Version 4: the content-hash index keyed by epoch (sample id >> 18, i.e.
// 262,144 ids; kContentHashEpochBits) first. Content hashes arrive in no
// order, so with one index over all of them each batch's inserts landed all
// over its B-tree, and in a large store a batch dirtied nearly all of it
// (docs/store.md, "Migration policy"). Keyed by epoch, a batch's inserts land in the newest epoch's
// part; a lookup probes each epoch (MetadataStore::find_by_content_hash).
void partition_content_hash_index(Database& db) {
  static_assert(kContentHashEpochBits == 18, "migration 4 has shipped: add a migration instead");
  db.exec("DROP INDEX IF EXISTS samples_content_hash");
  db.exec(
      "CREATE INDEX IF NOT EXISTS samples_content_hash_by_epoch"
      " ON samples (id >> 18, content_hash)");
}

// For its life, lets this connection write sqlite_master (migration 5):
// writable_schema on, and defensive mode off where the SQLite library starts
// connections in it (a build option; Debian's does not).
class SchemaWrites {
 public:
  explicit SchemaWrites(Database& db) : db_(db) {
    WINNOW_THROW_IF_NOT(
        sqlite3_db_config(db.handle(), SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive_) == SQLITE_OK,
        "cannot read the connection's defensive mode");
    if (defensive_ != 0) {
      WINNOW_THROW_IF_NOT(
          sqlite3_db_config(db.handle(), SQLITE_DBCONFIG_DEFENSIVE, 0, nullptr) == SQLITE_OK,
          "cannot leave defensive mode to rewrite CHECK constraints");
    }
    db.exec("PRAGMA writable_schema = ON");
  }
  ~SchemaWrites() {
    // Both only reset flags of this connection; a destructor cannot report.
    try {
      db_.exec("PRAGMA writable_schema = OFF");
    } catch (const Error&) {
    }
    if (defensive_ != 0) sqlite3_db_config(db_.handle(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  }
  SchemaWrites(const SchemaWrites&) = delete;
  SchemaWrites& operator=(const SchemaWrites&) = delete;

 private:
  Database& db_;
  int defensive_ = 0;
};

// A CHECK rewrite: the text `from` in table `table`'s CREATE statement
// becomes `to`, a rule every stored row already satisfies.
struct CheckRewrite {
  const char* table;
  const char* from;
  const char* to;
};

// Changes CHECK constraints in place by SQLite's own procedure for CHECK
// changes (https://sqlite.org/lang_altertable.html, section 7:
// writable_schema, a new schema_version). A CHECK constraint lives only in
// the text of its table's CREATE statement and nothing on disk depends on
// it. A table whose text lacks `from` (not created by winnow) is left as it
// is.
void rewrite_checks(Database& db, const std::vector<CheckRewrite>& rewrites) {
  std::vector<std::pair<std::string, std::string>> changed;  // table, new text
  {
    Statement read(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1");
    for (const CheckRewrite& rewrite : rewrites) {
      read.bind_all(std::string_view(rewrite.table));
      WINNOW_THROW_IF_NOT(read.step(), "table {} is missing", rewrite.table);
      std::string sql = read.column_text(0);
      read.reset();
      const std::size_t at = sql.find(rewrite.from);
      if (at == std::string::npos) continue;
      sql.replace(at, std::string_view(rewrite.from).size(), rewrite.to);
      changed.emplace_back(rewrite.table, std::move(sql));
    }
  }
  if (changed.empty()) return;
  std::int64_t schema_version = 0;
  {
    Statement version(db, "PRAGMA schema_version");
    WINNOW_THROW_IF_NOT(version.step(), "PRAGMA schema_version returned no row");
    schema_version = version.column_int64(0);
  }
  {
    const SchemaWrites allowed(db);
    Statement write(db, "UPDATE sqlite_master SET sql = ?1 WHERE type = 'table' AND name = ?2");
    for (const auto& [table, sql] : changed) {
      write.bind_all(std::string_view(sql), std::string_view(table));
      write.run();
      WINNOW_THROW_IF_NOT(db.changes() == 1, "the CREATE statement of table {} was not updated",
                          table);
    }
    // A new schema version makes every connection, this one included, read
    // the new text before its next statement. The number comes from SQLite.
    db.exec(fmt::format("PRAGMA schema_version = {}", schema_version + 1).c_str());
  }
  // Preparing a statement over the tables parses their new text: a text
  // SQLite cannot read fails here, and the migration's transaction rolls
  // the old one back. (The procedure's integrity check would read every
  // page of a store of millions of samples; the pages did not change.)
  for (const auto& [table, sql] : changed) {
    Statement parsed(db, fmt::format("SELECT 1 FROM {} LIMIT 0", table));
    static_cast<void>(parsed.step());
  }
}

// Version 5: the CHECK constraints that test a column against a list of
// more than two values (samples.status, events.decision,
// ingest_batches.state) written as chains of "=" instead. The rule is the
// same, but for such an IN list SQLite 3.40 builds a temporary b-tree each
// time a statement runs, a real share of each sample's insert with its
// event (docs/store.md, "Migration policy"). Every stored row satisfies the
// new text, which states the same rule.
void check_lists_as_comparisons(Database& db) {
  rewrite_checks(
      db, {{"samples",
            "status IN ('accepted', 'duplicate_exact',"
            "                'duplicate_near', 'label_issue', 'rejected')",
            "status = 'accepted' OR status = 'duplicate_exact' OR status = 'duplicate_near'"
            " OR status = 'label_issue' OR status = 'rejected'"},
           {"events",
            "decision IN ('accepted',"
            "             'duplicate_exact', 'duplicate_near', 'label_issue', 'rejected')",
            "decision = 'accepted' OR decision = 'duplicate_exact' OR decision = 'duplicate_near'"
            " OR decision = 'label_issue' OR decision = 'rejected'"},
           {"ingest_batches", "state IN ('pending', 'running', 'done', 'failed')",
            "state = 'pending' OR state = 'running' OR state = 'done' OR state = 'failed'"}});
}

// Version 6: the sketches of stored texts' shingle sets (TextSketchTable),
// so that a new ingest process rules stored candidates out without reading
// their texts; a row holds those one write of ingest kept, packed
// (text_sketch_table.h). Rows are written from now on; the texts of samples
// stored before are sketched when a batch first reads them.
void create_text_sketches(Database& db) {
  db.exec(
      "CREATE TABLE text_sketches ("
      " id INTEGER PRIMARY KEY,"
      " shingle INTEGER NOT NULL CHECK (shingle > 0),"
      " sketches BLOB NOT NULL CHECK (length(sketches) % 28 = 0))");
}

// Version 7: a text_sketches row may end with its checksum
// (text_sketch_table.cpp): 8 bytes after its whole sketches. The rows stored
// before keep whole sketches only, which the new rule allows too.
void checksummed_text_sketches(Database& db) {
  rewrite_checks(db, {{"text_sketches", "CHECK (length(sketches) % 28 = 0)",
                       "CHECK (length(sketches) % 28 = 0 OR length(sketches) % 28 = 8)"}});
}

// Version 8: a person's latest verdict on a sample (ReviewRecord,
// `winnow review`); each verdict is also a review event. A reviewed sample
// is left as the person left it by every machine re-judgement.
void create_reviews(Database& db) {
  db.exec(
      "CREATE TABLE reviews ("
      " sample_id INTEGER PRIMARY KEY REFERENCES samples(id),"
      " verdict TEXT NOT NULL CHECK (verdict = 'keep' OR verdict = 'drop'"
      " OR verdict = 'relabel' OR verdict = 'not_duplicate'),"
      " label INTEGER CHECK ((verdict = 'relabel') = (label IS NOT NULL)),"
      " reviewer TEXT NOT NULL, note TEXT NOT NULL, created_at TEXT NOT NULL)");
}

// Version 9: per label, the count and the sum of the label qualities of the
// accepted and label_issue samples, kept by triggers as samples are written
// (MetadataStore::label_quality_by_label), so that reading them no longer
// scans every sample: each batch reads them several times. Qualities are
// summed in fixed point (kLabelQualityScale per unit), so that the sums are
// exact whatever the order of the writes. Filled once from the samples stored.
void create_label_quality_sums(Database& db) {
  db.exec(
      "CREATE TABLE label_quality_sums ("
      " label INTEGER PRIMARY KEY,"
      " samples INTEGER NOT NULL,"
      " quality_fixed INTEGER NOT NULL)");
  db.exec(
      "INSERT INTO label_quality_sums (label, samples, quality_fixed)"
      " SELECT label, count(*), sum(CAST(round(label_quality * 4294967296.0) AS INTEGER))"
      " FROM samples WHERE (status = 'accepted' OR status = 'label_issue')"
      " AND label IS NOT NULL AND label_quality IS NOT NULL GROUP BY label");
  db.exec(
      "CREATE TRIGGER samples_label_quality_insert AFTER INSERT ON samples"
      " WHEN (NEW.status = 'accepted' OR NEW.status = 'label_issue')"
      " AND NEW.label IS NOT NULL AND NEW.label_quality IS NOT NULL BEGIN"
      " INSERT INTO label_quality_sums (label, samples, quality_fixed)"
      " VALUES (NEW.label, 1, CAST(round(NEW.label_quality * 4294967296.0) AS INTEGER))"
      " ON CONFLICT (label) DO UPDATE SET samples = samples + 1,"
      " quality_fixed = quality_fixed + excluded.quality_fixed;"
      " END");
  db.exec(
      "CREATE TRIGGER samples_label_quality_update"
      " AFTER UPDATE OF status, label, label_quality ON samples BEGIN"
      " UPDATE label_quality_sums SET samples = samples - 1,"
      " quality_fixed = quality_fixed - CAST(round(OLD.label_quality * 4294967296.0) AS INTEGER)"
      " WHERE label = OLD.label AND (OLD.status = 'accepted' OR OLD.status = 'label_issue')"
      " AND OLD.label_quality IS NOT NULL;"
      " INSERT INTO label_quality_sums (label, samples, quality_fixed)"
      " SELECT NEW.label, 1, CAST(round(NEW.label_quality * 4294967296.0) AS INTEGER)"
      " WHERE (NEW.status = 'accepted' OR NEW.status = 'label_issue')"
      " AND NEW.label IS NOT NULL AND NEW.label_quality IS NOT NULL"
      " ON CONFLICT (label) DO UPDATE SET samples = samples + 1,"
      " quality_fixed = quality_fixed + excluded.quality_fixed;"
      " END");
}

// Version 10: every state a sample has had, by dataset revision
// (SampleHistory, sample_history.h): triggers add a row when a sample is
// inserted and when its status, label or duplicate_of change, stamped with
// the revision the write transaction makes (the one after meta's), and with
// the last event id before it: the store appends a sample's event right after
// the write, so the state's reason is the sample's first event past it. The
// samples stored before get one row each, their state at the revision of the
// upgrade (its reason: their last event); what came before is not known.
void create_sample_history(Database& db) {
  db.exec(
      "CREATE TABLE sample_history ("
      " id INTEGER PRIMARY KEY,"
      " sample_id INTEGER NOT NULL REFERENCES samples (id),"
      " revision INTEGER NOT NULL,"
      " status TEXT NOT NULL,"
      " label INTEGER,"
      " duplicate_of INTEGER,"
      " events_before INTEGER NOT NULL)");
  db.exec("CREATE INDEX sample_history_sample ON sample_history (sample_id, revision)");
  db.exec("CREATE INDEX sample_history_revision ON sample_history (revision)");
  db.exec(
      "INSERT INTO sample_history (sample_id, revision, status, label, duplicate_of,"
      " events_before)"
      " SELECT id, coalesce((SELECT CAST(value AS INTEGER) FROM meta"
      " WHERE key = 'curation.revision'), 0), status, label, duplicate_of,"
      " coalesce((SELECT max(e.id) FROM events e WHERE e.sample_id = samples.id), 1) - 1"
      " FROM samples ORDER BY id");
  const char* kNewRow =
      " INSERT INTO sample_history (sample_id, revision, status, label, duplicate_of,"
      " events_before)"
      " VALUES (NEW.id, coalesce((SELECT CAST(value AS INTEGER) FROM meta"
      " WHERE key = 'curation.revision'), 0) + 1, NEW.status, NEW.label, NEW.duplicate_of,"
      " coalesce((SELECT max(id) FROM events), 0));";
  db.exec(fmt::format("CREATE TRIGGER samples_history_insert AFTER INSERT ON samples BEGIN{} END",
                      kNewRow)
              .c_str());
  db.exec(fmt::format("CREATE TRIGGER samples_history_update"
                      " AFTER UPDATE OF status, label, duplicate_of ON samples"
                      " WHEN OLD.status IS NOT NEW.status OR OLD.label IS NOT NEW.label"
                      " OR OLD.duplicate_of IS NOT NEW.duplicate_of BEGIN{} END",
                      kNewRow)
              .c_str());
}

// Version 11: what a training run learned about each sample
// (TrainingStatsTable, `winnow import-training`): one row a sample, the
// latest run's.
void create_training_stats(Database& db) {
  db.exec(
      "CREATE TABLE training_stats ("
      " sample_id INTEGER PRIMARY KEY REFERENCES samples (id),"
      " seen INTEGER NOT NULL CHECK (seen >= 0),"
      " mean_loss REAL NOT NULL, loss_trend REAL NOT NULL, last_loss REAL NOT NULL,"
      " last_epoch INTEGER NOT NULL, run TEXT NOT NULL,"
      " label INTEGER)");
}

// Version 12: the label a training run's model predicted for each sample in
// most epochs (TrainingStats::predicted; NULL when the run passed none).
void add_training_predictions(Database& db) {
  db.exec("ALTER TABLE training_stats ADD COLUMN predicted INTEGER");
}

}  // namespace

const std::vector<Migration>& schema_migrations() {
  // To change the schema, append {N + 1, "what it does", &function}. Never
  // edit a migration that has shipped: files in the field already ran it.
  static const std::vector<Migration> migrations = {
      {1, "initial schema: samples, annotations, contributors, ingest_batches, events, meta",
       &create_initial_schema},
      {2, "curation_vectors: embeddings and contents of accepted samples",
       &create_curation_vectors},
      {3, "image_quality: image-quality scores and issues of decoded image files",
       &create_image_quality},
      {4, "samples_content_hash_by_epoch: the content-hash index keyed by id epoch first",
       &partition_content_hash_index},
      {5, "CHECK constraints with lists of values written as comparisons",
       &check_lists_as_comparisons},
      {6, "text_sketches: sketches of stored texts' shingle sets", &create_text_sketches},
      {7, "text_sketches rows may end with their checksum", &checksummed_text_sketches},
      {8, "reviews: a person's latest verdict on a sample", &create_reviews},
      {9, "label_quality_sums: label-quality counts and sums per label, kept by triggers",
       &create_label_quality_sums},
      {10, "sample_history: every state of every sample, by dataset revision",
       &create_sample_history},
      {11, "training_stats: what a training run learned about each sample", &create_training_stats},
      {12, "training_stats.predicted: the label a run's model predicted most",
       &add_training_predictions},
  };
  return migrations;
}

int latest_schema_version() {
  return schema_migrations().back().version;
}

void migrate(Database& db) {
  const int latest = latest_schema_version();
  const auto check_known = [&](int version) {
    WINNOW_THROW_IF_NOT(version >= 0 && version <= latest,
                        "{}: database schema version {} is newer than this build of winnow "
                        "supports (up to {}); upgrade winnow to open it",
                        db.path(), version, latest);
  };
  check_known(db.schema_version());
  for (const Migration& migration : schema_migrations()) {
    if (db.schema_version() >= migration.version) {
      continue;
    }
    Transaction transaction(db);
    // Another process may have migrated while we waited for the write lock.
    const int current = db.schema_version();
    check_known(current);
    if (current >= migration.version) {
      continue;  // the transaction rolls back; nothing was written
    }
    WINNOW_THROW_IF_NOT(current == migration.version - 1,
                        "{}: schema version {} cannot take migration {} ({})", db.path(), current,
                        migration.version, migration.description);
    try {
      migration.apply(db);
    } catch (const Error& error) {
      WINNOW_THROW("{}: migration to schema version {} ({}) failed: {}", db.path(),
                   migration.version, migration.description, error.what());
    }
    // The version number is a constant, never input.
    db.exec(fmt::format("PRAGMA user_version = {}", migration.version).c_str());
    transaction.commit();
  }
}

}  // namespace winnow::store
