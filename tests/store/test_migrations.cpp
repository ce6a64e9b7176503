#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/sample_history.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/migrations.h"
#include "winnow/store/statement.h"
#include "winnow/store/text_sketch_table.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::TempDir;

namespace {

std::int64_t query_int(Database& db, const char* sql) {
  Statement query(db, sql);
  REQUIRE(query.step());
  return query.column_int64(0);
}

std::string query_text(Database& db, const char* sql) {
  Statement query(db, sql);
  REQUIRE(query.step());
  return query.column_text(0);
}

// Sets user_version behind winnow's back, as a newer build would have.
void set_user_version_raw(const std::string& path, int version) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const std::string sql = "PRAGMA user_version = " + std::to_string(version);
  REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_close(db) == SQLITE_OK);
}

// Migration 11's table, gone.
void undo_training_stats(Database& db) {
  db.exec("DROP TABLE training_stats");
}

// Migration 10's table and triggers, gone (and 11's).
void undo_sample_history(Database& db) {
  undo_training_stats(db);
  db.exec("DROP TRIGGER samples_history_insert");
  db.exec("DROP TRIGGER samples_history_update");
  db.exec("DROP TABLE sample_history");
}

// Migration 9's table and triggers, gone (and 10's, which come after).
void undo_label_quality_sums(Database& db) {
  undo_sample_history(db);
  db.exec("DROP TRIGGER samples_label_quality_insert");
  db.exec("DROP TRIGGER samples_label_quality_update");
  db.exec("DROP TABLE label_quality_sums");
}

// A file at schema `version` as the build before the next migration left it:
// today's schema with one sample, less what later migrations made (`undo`,
// SQL run in order). Returns the sample's id.
std::int64_t old_version_file(const std::string& path, int version,
                              const std::vector<const char*>& undo) {
  std::int64_t sample_id = 0;
  {
    MetadataStore store(path);
    sample_id = store.insert_sample(test::make_sample(1));
    for (const char* sql : undo) store.database().exec(sql);
    if (version < 9) {
      undo_label_quality_sums(store.database());
    } else if (version < 10) {
      undo_sample_history(store.database());
    } else if (version < 11) {
      undo_training_stats(store.database());
    }
  }
  set_user_version_raw(path, version);
  return sample_id;
}

}  // namespace

TEST_CASE("migrations are numbered 1, 2, ... without gaps", "[store][migrations]") {
  const auto& migrations = schema_migrations();
  REQUIRE_FALSE(migrations.empty());
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    CHECK(migrations[i].version == static_cast<int>(i + 1));
    CHECK(migrations[i].apply != nullptr);
  }
  CHECK(latest_schema_version() == migrations.back().version);
}

TEST_CASE("opening an empty file creates the whole schema", "[store][migrations]") {
  TempDir dir;
  Database db(dir.file("fresh.db"));
  CHECK(db.schema_version() == latest_schema_version());
  CHECK(query_text(db, "PRAGMA journal_mode") == "wal");
  CHECK(query_int(db, "PRAGMA foreign_keys") == 1);
  for (const char* table : {"samples", "annotations", "contributors", "ingest_batches", "events",
                            "meta", "curation_vectors", "image_quality", "text_sketches", "reviews",
                            "label_quality_sums", "sample_history", "training_stats"}) {
    Statement query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
    query.bind_all(std::string_view(table));
    REQUIRE(query.step());
    CHECK(query.column_int64(0) == 1);
  }
  CHECK(query_int(db,
                  "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                  "AND name = 'samples_content_hash_by_epoch'") == 1);
  CHECK(query_int(db,
                  "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                  "AND name = 'samples_content_hash'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 7);
  CHECK(query_text(db, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("re-opening a migrated database changes nothing", "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("reopen.db");
  std::int64_t objects = 0;
  {
    MetadataStore store(path);
    store.insert_sample(test::make_sample(1));
    store.set_meta("index.path", "/data/index.faiss");
    objects = query_int(store.database(), "SELECT count(*) FROM sqlite_master");
  }
  MetadataStore again(path);
  CHECK(again.database().schema_version() == latest_schema_version());
  CHECK(query_int(again.database(), "SELECT count(*) FROM sqlite_master") == objects);
  CHECK(again.count_by_status().total() == 1);
  CHECK(again.get_meta("index.path") == std::optional<std::string>("/data/index.faiss"));
}

TEST_CASE("a version 1 database with data migrates to the latest version keeping it",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  const bool had_vectors_table = GENERATE(true, false);
  INFO("the v1 file already had curation_vectors: " << had_vectors_table);
  // A version 1 file as an older build left it: migration 1's schema (never
  // edited since) with a sample, and curation_vectors as the old ingest
  // pipeline created it itself, with a row; or without that table.
  std::int64_t sample_id = 0;
  {
    MetadataStore store(path);
    sample_id = store.insert_sample(test::make_sample(1));
    if (had_vectors_table) {
      Statement insert(store.database(),
                       "INSERT INTO curation_vectors VALUES (?1, x'0000803f', 'pixels', 2, 2, "
                       "x'01020304')");
      insert.bind_all(sample_id);
      insert.run();
    } else {
      store.database().exec("DROP TABLE curation_vectors");
    }
    store.database().exec("DROP TABLE image_quality");  // migration 3's
    store.database().exec("DROP TABLE text_sketches");  // migration 6's
    store.database().exec("DROP TABLE reviews");        // migration 8's
    undo_label_quality_sums(store.database());          // migration 9's
  }
  set_user_version_raw(path, 1);

  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  CHECK(query_int(store.database(), "SELECT count(*) FROM image_quality") == 0);
  CHECK(store.count_by_status().total() == 1);
  CHECK(store.find_sample(sample_id).has_value());
  CHECK(query_int(store.database(), "SELECT count(*) FROM curation_vectors") ==
        (had_vectors_table ? 1 : 0));
  if (had_vectors_table) {
    CHECK(query_text(store.database(), "SELECT hex(content) FROM curation_vectors") == "01020304");
  }
  CHECK(query_text(store.database(), "PRAGMA integrity_check") == "ok");
}

TEST_CASE("a version 2 database gets the image_quality table and keeps its samples",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  const std::int64_t sample_id = old_version_file(
      path, 2, {"DROP TABLE image_quality", "DROP TABLE text_sketches", "DROP TABLE reviews"});
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  CHECK(store.find_sample(sample_id).has_value());
  ImageQualityTable table(store.database());
  CHECK(table.count().images == 0);
  CHECK_FALSE(table.find(sample_id).has_value());
  ImageQualityRecord record;
  record.sample_id = sample_id;
  record.width = 640;
  record.height = 100;
  record.scores[static_cast<std::size_t>(ImageIssue::odd_aspect_ratio)] = 100.0 / 640;
  record.issues[static_cast<std::size_t>(ImageIssue::odd_aspect_ratio)] = true;
  table.put(record);
  CHECK(table.count().issues[static_cast<std::size_t>(ImageIssue::odd_aspect_ratio)] == 1);
  CHECK(query_text(store.database(), "PRAGMA integrity_check") == "ok");
}

TEST_CASE("a version 3 database gets the content-hash index by epoch, and finds its samples",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  // Before the epochs: one index on content_hash.
  const std::int64_t sample_id =
      old_version_file(path, 3,
                       {"DROP INDEX samples_content_hash_by_epoch",
                        "CREATE INDEX samples_content_hash ON samples (content_hash)",
                        "DROP TABLE text_sketches", "DROP TABLE reviews"});
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  CHECK(query_int(store.database(),
                  "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                  "AND name = 'samples_content_hash'") == 0);
  CHECK(query_text(store.database(),
                   "SELECT sql FROM sqlite_master WHERE name = 'samples_content_hash_by_epoch'") ==
        "CREATE INDEX samples_content_hash_by_epoch ON samples (id >> 18, content_hash)");
  CHECK(store.find_by_content_hash("hash-1")->id == sample_id);
  CHECK(query_text(store.database(), "PRAGMA integrity_check") == "ok");
}

namespace {

// The lists of values in the CHECK constraints of migration 1, and the
// comparisons migration 5 writes in their place.
struct CheckText {
  const char* table;
  const char* in_list;
  const char* comparisons;
};
const CheckText kCheckTexts[] = {
    {"samples",
     "status IN ('accepted', 'duplicate_exact',                'duplicate_near', 'label_issue', "
     "'rejected')",
     "status = 'accepted' OR status = 'duplicate_exact' OR status = 'duplicate_near' OR status = "
     "'label_issue' OR status = 'rejected'"},
    {"events",
     "decision IN ('accepted',             'duplicate_exact', 'duplicate_near', 'label_issue', "
     "'rejected')",
     "decision = 'accepted' OR decision = 'duplicate_exact' OR decision = 'duplicate_near' OR "
     "decision = 'label_issue' OR decision = 'rejected'"},
    {"ingest_batches", "state IN ('pending', 'running', 'done', 'failed')",
     "state = 'pending' OR state = 'running' OR state = 'done' OR state = 'failed'"},
};

std::string table_sql(Database& db, const char* table) {
  Statement query(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1");
  query.bind_all(std::string_view(table));
  REQUIRE(query.step());
  return query.column_text(0);
}

// Each table's CHECK text holds migration 5's comparisons, not the list.
void check_comparisons(Database& db) {
  for (const CheckText& text : kCheckTexts) {
    INFO(text.table);
    const std::string sql = table_sql(db, text.table);
    CHECK_THAT(sql, !Catch::Contains(text.in_list));
    CHECK_THAT(sql, Catch::Contains(text.comparisons));
  }
}

// A statement that the store's CHECK constraints must refuse, run as another
// program would, without winnow's own checks before it.
void check_refused(Database& db, const char* sql) {
  INFO(sql);
  try {
    db.exec(sql);
    FAIL("the CHECK constraint let it through");
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("CHECK constraint failed"));
  }
}

}  // namespace

TEST_CASE("a fresh file's CHECK constraints compare values one by one", "[store][migrations]") {
  TempDir dir;
  Database db(dir.file("fresh.db"));
  check_comparisons(db);
}

TEST_CASE("a version 4 database gets CHECK constraints without lists, refusing the same values",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v4.db");
  std::int64_t sample_id = 0;
  {
    MetadataStore store(path);
    sample_id = store.insert_sample(test::make_sample(1));
    store.database().exec("DROP TABLE text_sketches");
    store.database().exec("DROP TABLE reviews");
    undo_label_quality_sums(store.database());
  }
  {
    // Version 4 as the build before left it: migration 1's lists of values,
    // put back by SQLite's procedure for CHECK changes.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    std::string sql = "BEGIN; PRAGMA writable_schema = ON;";
    for (const CheckText& text : kCheckTexts) {
      sql += std::string("UPDATE sqlite_master SET sql = replace(sql, '") +
             std::regex_replace(text.comparisons, std::regex("'"), "''") + "', '" +
             std::regex_replace(text.in_list, std::regex("'"), "''") + "') WHERE name = '" +
             text.table + "';";
    }
    sqlite3_stmt* version = nullptr;
    REQUIRE(sqlite3_prepare_v2(raw, "PRAGMA schema_version", -1, &version, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(version) == SQLITE_ROW);
    const std::int64_t schema_version = sqlite3_column_int64(version, 0);
    REQUIRE(sqlite3_finalize(version) == SQLITE_OK);
    sql += "PRAGMA schema_version = " + std::to_string(schema_version + 1) +
           "; PRAGMA writable_schema = OFF; PRAGMA user_version = 4; COMMIT;";
    REQUIRE(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_close(raw) == SQLITE_OK);
  }
  MetadataStore store(path);
  Database& db = store.database();
  CHECK(db.schema_version() == latest_schema_version());
  check_comparisons(db);
  CHECK(store.find_sample(sample_id).has_value());
  CHECK(query_text(db, "PRAGMA integrity_check") == "ok");

  // The same rules: what the lists refused is refused, what they let through passes.
  check_refused(db,
                "INSERT INTO samples (external_key, content_hash, status) VALUES ('k', 'h', "
                "'bogus')");
  check_refused(db,
                "INSERT INTO events (sample_id, kind, decision) VALUES (NULL, 'ingest', 'bogus')");
  check_refused(db,
                "INSERT INTO ingest_batches (file_name, checksum, state) VALUES "
                "('f', 'c', 'bogus')");
  db.exec("INSERT INTO events (sample_id, kind, decision) VALUES (NULL, 'note', NULL)");
  db.exec("INSERT INTO samples (external_key, content_hash, status) VALUES ('k', 'h', 'rejected')");
  db.exec("INSERT INTO ingest_batches (file_name, checksum, state) VALUES ('f', 'c', 'failed')");
  check_refused(db,
                "INSERT INTO samples (external_key, content_hash, status) VALUES ('k2', 'h', "
                "'duplicate_near')");  // a duplicate without its original
}

TEST_CASE("a version 5 database gets the text_sketches table and keeps its samples",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  const std::int64_t sample_id =
      old_version_file(path, 5, {"DROP TABLE text_sketches", "DROP TABLE reviews"});
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  CHECK(store.find_sample(sample_id).has_value());
  TextSketchTable table(store.database());
  std::vector<StoredTextSketch> sketches;
  const auto read = [&] {
    sketches.clear();
    table.for_each(5, [&](const StoredTextSketch& sketch) { sketches.push_back(sketch); });
  };
  read();
  CHECK(sketches.empty());
  table.add(5, {{sample_id, 12, {1, 2}}});
  read();
  REQUIRE(sketches.size() == 1);
  CHECK(sketches[0].sample_id == sample_id);
  CHECK(query_text(store.database(), "PRAGMA integrity_check") == "ok");
}

TEST_CASE("a schema newer than this build is refused with a clear error", "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("future.db");
  { Database db(path); }
  const int future = latest_schema_version() + 41;
  set_user_version_raw(path, future);
  try {
    Database db(path);
    FAIL("opening a newer schema should throw");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Contains(path));
    CHECK_THAT(message, Catch::Contains(std::to_string(future)));
    CHECK_THAT(message, Catch::Contains("newer"));
  }
}

TEST_CASE("files that cannot be databases give errors naming them", "[store][migrations]") {
  TempDir dir;
  SECTION("a missing directory") {
    const std::string path = dir.file("no/such/dir/x.db");
    REQUIRE_THROWS_WITH(Database(path), Catch::Contains(path) && Catch::Contains("open"));
  }
  SECTION("a file that is not SQLite") {
    const std::string path = dir.file("garbage.db");
    std::ofstream(path) << std::string(8192, 'x');
    REQUIRE_THROWS_WITH(Database(path), Catch::Contains(path) && Catch::Contains("not a database"));
  }
}

TEST_CASE("statements report bad SQL and misuse with the SQL text", "[store][statement]") {
  TempDir dir;
  Database db(dir.file("statement.db"));
  REQUIRE_THROWS_WITH(
      Statement(db, "SELECT nope FROM samples"),
      Catch::Contains("no such column: nope") && Catch::Contains("SELECT nope FROM samples"));
  REQUIRE_THROWS_WITH(Statement(db, "SELECT 1; SELECT 2"), Catch::Contains("more than one"));
  Statement one(db, "SELECT ?1");
  REQUIRE_THROWS_WITH(one.bind_all(1, 2), Catch::Contains("binding parameter 2"));
  one.bind_all(std::optional<std::int64_t>());
  REQUIRE(one.step());
  CHECK(one.is_null(0));
  one.bind_all(std::uint64_t{7});
  REQUIRE(one.step());
  CHECK(one.column_int64(0) == 7);
  REQUIRE_THROWS_WITH(one.bind_all(std::uint64_t{1} << 63), Catch::Contains("int64"));
}

TEST_CASE("a version 7 database gets the reviews table and keeps its samples",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v7.db");
  const std::int64_t sample_id = old_version_file(path, 7, {"DROP TABLE reviews"});
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  REQUIRE(store.find_sample(sample_id));
  CHECK(store.reviews().empty());
  store.record_review({sample_id, Verdict::drop, std::nullopt, "ann", "blurry", {}},
                      {SampleStatus::rejected, std::nullopt, "drop by ann", ""});
  CHECK(store.find_sample(sample_id)->status == SampleStatus::rejected);
  REQUIRE(store.review_of(sample_id));
  CHECK(store.review_of(sample_id)->reviewer == "ann");
}

TEST_CASE("a version 8 database gets the label-quality sums of the samples it holds",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v8.db");
  {
    MetadataStore store(path);
    for (int i = 0; i < 6; ++i) {
      NewSample s = test::make_sample(i);
      s.label = i % 2;
      s.label_quality = 0.1 * (i + 1);
      if (i == 5) s.decision.status = SampleStatus::rejected;  // not counted
      store.insert_sample(s);
    }
    undo_label_quality_sums(store.database());
  }
  set_user_version_raw(path, 8);
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  const auto sums = store.label_quality_by_label();
  REQUIRE(sums.size() == 2);
  CHECK(sums[0].label == 0);
  CHECK(sums[0].samples == 3);  // 0.1, 0.3, 0.5
  CHECK(sums[0].quality_sum == Approx(0.9).margin(1e-9));
  CHECK(sums[1].label == 1);
  CHECK(sums[1].samples == 2);  // 0.2, 0.4 (0.6 rejected)
  CHECK(sums[1].quality_sum == Approx(0.6).margin(1e-9));
}

TEST_CASE("a version 9 database gets one history row a sample, at its revision then",
          "[store][migrations]") {
  TempDir dir;
  const std::string path = dir.file("v9.db");
  std::int64_t first = 0, second = 0;
  {
    MetadataStore store(path);
    first = store.insert_sample(test::make_sample(1));
    second = store.insert_sample(test::make_sample(2));
    store.update_status(second, {SampleStatus::label_issue, std::nullopt, "doubtful label", ""});
    store.set_meta(kRevisionKey, "7");
    undo_sample_history(store.database());
  }
  set_user_version_raw(path, 9);
  MetadataStore store(path);
  CHECK(store.database().schema_version() == latest_schema_version());
  SampleHistory history(store.database());
  CHECK(history.revision() == 7);
  std::vector<SampleState> at7;
  history.for_each_at(7, [&](const SampleState& s) { at7.push_back(s); });
  REQUIRE(at7.size() == 2);
  CHECK(at7[0].sample_id == first);
  CHECK(at7[0].revision == 7);
  CHECK(at7[1].status == SampleStatus::label_issue);
  CHECK(history.reason_of(at7[1]) == "doubtful label");  // its last event
  std::size_t before = 0;
  history.for_each_at(6, [&](const SampleState&) { ++before; });
  CHECK(before == 0);  // what came before the upgrade is not known
}
