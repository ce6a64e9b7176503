#include <catch2/catch.hpp>

#include <stdexcept>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

namespace {

std::int64_t count_rows(Database& db, const char* table_sql) {
  Statement query(db, table_sql);
  REQUIRE(query.step());
  return query.column_int64(0);
}

struct Totals {
  std::int64_t samples, annotations, events, contributors;
};

Totals totals(Database& db) {
  return {count_rows(db, "SELECT count(*) FROM samples"),
          count_rows(db, "SELECT count(*) FROM annotations"),
          count_rows(db, "SELECT count(*) FROM events"),
          count_rows(db, "SELECT count(*) FROM contributors")};
}

}  // namespace

TEST_CASE("an exception inside a transaction leaves nothing written", "[store][transaction]") {
  TempDir dir;
  MetadataStore store(dir.file("rollback.db"));
  store.insert_sample(make_sample(0));
  const Totals before = totals(store.database());

  REQUIRE_THROWS_AS(
      [&] {
        Transaction transaction(store.database());
        store.insert_sample(make_sample(1, "new-source"));
        store.insert_samples({make_sample(2), make_sample(3)});
        store.set_meta("embedder", "clip");
        throw std::runtime_error("pipeline failed mid-batch");
      }(),
      std::runtime_error);

  const Totals after = totals(store.database());
  CHECK(after.samples == before.samples);
  CHECK(after.annotations == before.annotations);
  CHECK(after.events == before.events);
  CHECK(after.contributors == before.contributors);
  CHECK_FALSE(store.database().in_transaction());
  CHECK_FALSE(store.find_by_external_key("sample-1"));
  CHECK_FALSE(store.get_meta("embedder"));

  // The source created inside the rolled-back transaction is gone; using
  // its name again must create it afresh rather than reuse a dead id.
  store.insert_sample(make_sample(4, "new-source"));
  CHECK(store.count_by_source()["new-source"].total() == 1);
}

TEST_CASE("a failing sample rolls back its whole batch", "[store][transaction]") {
  TempDir dir;
  MetadataStore store(dir.file("batch.db"));
  std::vector<NewSample> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back(make_sample(i, "fresh-source"));
  }
  batch[37].decision.status = SampleStatus::duplicate_exact;
  batch[37].decision.duplicate_of = 999999;  // no such sample: foreign key fails
  REQUIRE_THROWS_WITH(store.insert_samples(batch),
                      Catch::Contains("sample-37") && Catch::Contains("FOREIGN KEY"));
  const Totals after = totals(store.database());
  CHECK(after.samples == 0);
  CHECK(after.annotations == 0);
  CHECK(after.events == 0);
  CHECK(after.contributors == 0);

  batch[37] = make_sample(37, "fresh-source");
  const auto ids = store.insert_samples(batch);
  CHECK(ids.size() == 50);
  CHECK(store.count_by_source()["fresh-source"].total() == 50);
}

TEST_CASE("nested transactions commit only with the outermost", "[store][transaction]") {
  TempDir dir;
  const std::string path = dir.file("nested.db");
  MetadataStore store(path);
  MetadataStore other(path);  // a second connection sees only committed data
  {
    Transaction outer(store.database());
    store.insert_sample(make_sample(1));
    {
      Transaction inner(store.database());
      CHECK(inner.nested());
      store.insert_sample(make_sample(2));
      inner.commit();
    }
    {
      Transaction discarded(store.database());
      store.insert_sample(make_sample(3));
    }  // rolled back to its savepoint only
    CHECK(other.count_by_status().total() == 0);
    CHECK(store.count_by_status().total() == 2);
    outer.commit();
  }
  CHECK(other.count_by_status().total() == 2);
  CHECK(other.find_by_external_key("sample-2"));
  CHECK_FALSE(other.find_by_external_key("sample-3"));
}

TEST_CASE("store errors carry a kind (a held write lock is busy) and commits are synchronous=FULL",
          "[store][transaction][hardening]") {
  winnow::test::TempDir dir;
  const std::string path = dir.file("kinds.db");
  winnow::store::Database holder(path);
  winnow::store::DatabaseOptions impatient;
  impatient.busy_timeout_ms = 0;
  winnow::store::Database writer(path, impatient);
  holder.exec("CREATE TABLE t (x INTEGER)");
  holder.exec("BEGIN IMMEDIATE");
  try {
    writer.exec("BEGIN IMMEDIATE");
    FAIL("a second writer got the lock");
  } catch (const winnow::Error& e) {
    CHECK(e.kind() == winnow::ErrorKind::busy);
  }
  // A prepared statement's step: the same kind (a daemon retries it, not fails the batch).
  winnow::store::Statement insert(writer, "INSERT INTO t (x) VALUES (1)");
  try {
    insert.step();
    FAIL("an insert got the lock");
  } catch (const winnow::Error& e) {
    CHECK(e.kind() == winnow::ErrorKind::busy);
    CHECK(std::string(e.what()).find("executing `INSERT INTO t (x) VALUES (1)` failed") !=
          std::string::npos);
  }
  holder.exec("COMMIT");
  writer.exec("BEGIN IMMEDIATE");
  writer.exec("COMMIT");
  winnow::store::Statement sync(writer, "PRAGMA synchronous");
  REQUIRE(sync.step());
  CHECK(sync.column_int64(0) == 2);  // FULL: a commit is on disk when COMMIT returns
}

TEST_CASE("bulk writes join a caller's transaction without a savepoint", "[store][transaction]") {
  TempDir dir;
  MetadataStore store(dir.file("join.db"));
  std::vector<NewSample> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(make_sample(i));
  batch[3].decision.status = SampleStatus::duplicate_exact;
  batch[3].decision.duplicate_of = 999999;  // no such sample: foreign key fails

  Transaction outer(store.database());
  REQUIRE_THROWS_WITH(store.insert_samples(batch),
                      Catch::Contains("sample-3") && Catch::Contains("must roll back"));
  // Joined: the items before the failing one are in the caller's transaction
  // (a savepoint would have taken them back), and the caller decides.
  CHECK(count_rows(store.database(), "SELECT count(*) FROM samples") == 3);
  CHECK(store.database().in_transaction());
  REQUIRE_THROWS_WITH(store.set_label_qualities({{1, 0.5}, {999999, 0.5}}),
                      Catch::Contains("999999"));
  CHECK(count_rows(store.database(), "SELECT count(*) FROM samples WHERE label_quality = 0.5") ==
        1);
  {
    Transaction inner(store.database(), Transaction::Nested::join);
    CHECK(inner.nested());
    store.insert_sample(make_sample(7));
    // Not committed: a joined transaction leaves its writes to the caller.
  }
  CHECK(store.find_by_external_key("sample-7"));
}
