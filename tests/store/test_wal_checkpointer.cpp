// WalCheckpointer: a committed transaction's pages reach the database file
// through the checkpointer's thread, not through the writer's commit, and
// nothing committed is lost while the writer goes on writing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"
#include "winnow/store/wal_checkpointer.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::TempDir;

namespace {

constexpr std::size_t kRowBytes = 4096;

// `rows` rows of kRowBytes each, in one transaction.
void insert_rows(Database& db, int first, int rows) {
  Transaction tx(db);
  for (int i = first; i < first + rows; ++i) {
    std::vector<std::uint8_t> blob(kRowBytes, static_cast<std::uint8_t>(i));
    db.cached("INSERT INTO payload (n, bytes) VALUES (?1, ?2)")
        .bind_all(i, BlobView{blob.data(), blob.size()})
        .step();
  }
  tx.commit();
}

std::int64_t scalar(Database& db, const char* sql) {
  Statement query(db, sql);
  REQUIRE(query.step());
  return query.column_int64(0);
}

std::uintmax_t file_size(const std::string& path) {
  return std::filesystem::file_size(path);
}

}  // namespace

TEST_CASE("a checkpoint requested after a commit copies it into the database file off the writer",
          "[wal]") {
  TempDir dir;
  const std::string path = dir.file("wal.db");
  Database db(path);
  db.exec("CREATE TABLE payload (n INTEGER PRIMARY KEY, bytes BLOB NOT NULL)");
  const std::uintmax_t before = file_size(path);
  {
    WalCheckpointer checkpointer(db);
    CHECK(scalar(db, "PRAGMA wal_autocheckpoint") == 0);

    // 8 MB committed: without the checkpointer the commit would have copied
    // it into the file (SQLite's automatic checkpoint past 1,000 pages).
    insert_rows(db, 0, 2048);
    CHECK(file_size(path) < before + (1u << 20));
    CHECK(checkpointer.completed() == 0);

    checkpointer.request();
    checkpointer.wait_idle();
    CHECK(checkpointer.completed() == 1);
    const WalCheckpointResult result = checkpointer.last();
    INFO(result.error);
    CHECK(result.error.empty());
    CHECK(result.wal_frames > 2048);
    CHECK(result.checkpointed == result.wal_frames);
    CHECK(file_size(path) > before + 2048 * kRowBytes);
  }
  // The writer checkpoints at its commits again.
  CHECK(scalar(db, "PRAGMA wal_autocheckpoint") == 1000);
  CHECK(scalar(db, "SELECT count(*) FROM payload") == 2048);
}

TEST_CASE("checkpoints beside a writer that keeps committing lose nothing", "[wal]") {
  TempDir dir;
  const std::string path = dir.file("wal.db");
  Database db(path);
  db.exec("CREATE TABLE payload (n INTEGER PRIMARY KEY, bytes BLOB NOT NULL)");
  constexpr int kBatches = 40;
  constexpr int kRows = 64;
  {
    WalCheckpointer checkpointer(db);
    for (int b = 0; b < kBatches; ++b) {
      insert_rows(db, b * kRows, kRows);
      checkpointer.request();  // runs while the next batch is written
    }
    checkpointer.wait_idle();
    CHECK(checkpointer.completed() >= 1);
    CHECK(checkpointer.completed() <= static_cast<std::size_t>(kBatches));
    const WalCheckpointResult result = checkpointer.last();
    INFO(result.error);
    CHECK(result.error.empty());
    CHECK(result.checkpointed == result.wal_frames);  // nothing was writing by then
  }
  CHECK(scalar(db, "SELECT count(*) FROM payload") == kBatches * kRows);
  CHECK(scalar(db, "SELECT sum(length(bytes)) FROM payload") ==
        static_cast<std::int64_t>(kBatches * kRows * kRowBytes));
  Statement check(db, "PRAGMA integrity_check");
  REQUIRE(check.step());
  CHECK(check.column_text(0) == "ok");

  // Another connection, opened afresh, reads the same rows.
  Database reader(path);
  CHECK(scalar(reader, "SELECT count(*) FROM payload") == kBatches * kRows);
}

TEST_CASE("an in-memory database has no WAL to checkpoint", "[wal]") {
  Database db(":memory:");
  CHECK_THROWS_WITH(WalCheckpointer(db), Catch::Contains("in-memory"));
  CHECK(scalar(db, "PRAGMA wal_autocheckpoint") == 1000);
}
