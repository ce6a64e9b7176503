// The schema's guarantees hold even against raw SQL, not only through the API.
#include <catch2/catch.hpp>

#include <cmath>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

namespace {

void run_sql(Database& db, const char* sql) {
  Statement(db, sql).run();
}

std::int64_t count(Database& db, const char* sql) {
  Statement query(db, sql);
  REQUIRE(query.step());
  return query.column_int64(0);
}

}  // namespace

TEST_CASE("events are append-only", "[store][constraints]") {
  TempDir dir;
  MetadataStore store(dir.file("events.db"));
  const std::int64_t id = store.insert_sample(make_sample(1));
  Database& db = store.database();
  REQUIRE(count(db, "SELECT count(*) FROM events") == 1);

  REQUIRE_THROWS_WITH(run_sql(db, "UPDATE events SET reason = 'rewritten'"),
                      Catch::Contains("append-only") && Catch::Contains("UPDATE"));
  REQUIRE_THROWS_WITH(run_sql(db, "DELETE FROM events"),
                      Catch::Contains("append-only") && Catch::Contains("DELETE"));
  const auto events = store.events_of(id);
  REQUIRE(events.size() == 1);
  CHECK(events[0].reason == "new content");
  CHECK(events[0].kind == kEventIngest);
  CHECK(events[0].decision == SampleStatus::accepted);
  CHECK(events[0].details_json == R"({"near_dup_threshold": 0.98})");
}

TEST_CASE("samples are never deleted", "[store][constraints]") {
  TempDir dir;
  MetadataStore store(dir.file("nodelete.db"));
  store.insert_samples({make_sample(1), make_sample(2)});
  REQUIRE_THROWS_WITH(run_sql(store.database(), "DELETE FROM samples WHERE id = 1"),
                      Catch::Contains("never deleted"));
  CHECK(store.count_by_status().total() == 2);
}

TEST_CASE("a second sample with the same external key is refused by name", "[store][constraints]") {
  TempDir dir;
  MetadataStore store(dir.file("unique.db"));
  const std::int64_t first = store.insert_sample(make_sample(7));
  NewSample again = make_sample(8);
  again.external_key = "sample-7";
  REQUIRE_THROWS_WITH(store.insert_sample(again),
                      Catch::Contains("external key 'sample-7' already exists") &&
                          Catch::Contains(fmt::format("sample {}", first)));
  SECTION("also twice within one batch") {
    NewSample twice = make_sample(100);
    REQUIRE_THROWS_WITH(store.insert_samples({twice, make_sample(101), twice}),
                        Catch::Contains("'sample-100'") && Catch::Contains("item 3 of 3"));
    CHECK_FALSE(store.find_by_external_key("sample-101"));
  }
  CHECK(store.count_by_status().total() == 1);
}

TEST_CASE("bad statuses and inconsistent decisions are rejected", "[store][constraints]") {
  TempDir dir;
  MetadataStore store(dir.file("status.db"));
  const std::int64_t id = store.insert_sample(make_sample(1));

  REQUIRE_THROWS_WITH(parse_sample_status("maybe"), Catch::Contains("'maybe'"));
  CHECK(parse_sample_status("label_issue") == SampleStatus::label_issue);
  REQUIRE_THROWS_WITH(run_sql(store.database(), "UPDATE samples SET status = 'maybe'"),
                      Catch::Contains("CHECK constraint failed"));
  REQUIRE_THROWS_WITH(
      run_sql(store.database(), "UPDATE samples SET status = 'duplicate_near'"),
      Catch::Contains("CHECK constraint failed"));  // a duplicate needs duplicate_of

  Decision duplicate{SampleStatus::duplicate_exact, std::nullopt, "same hash", ""};
  REQUIRE_THROWS_WITH(store.update_status(id, duplicate), Catch::Contains("needs duplicate_of"));
  Decision accepted_with_original{SampleStatus::accepted, id, "", ""};
  REQUIRE_THROWS_WITH(store.update_status(id, accepted_with_original),
                      Catch::Contains("cannot have duplicate_of"));
  NewSample self = make_sample(2);
  self.decision = {SampleStatus::rejected, std::nullopt, "", "not json"};
  REQUIRE_THROWS_WITH(store.insert_sample(self), Catch::Contains("json_valid"));
  NewSample bad_gain = make_sample(3);
  bad_gain.gain = std::nan("");
  REQUIRE_THROWS_WITH(store.insert_sample(bad_gain), Catch::Contains("gain must be finite"));
  REQUIRE_THROWS_WITH(store.update_status(424242, Decision{}),
                      Catch::Contains("no sample with id 424242"));

  CHECK(store.find_sample(id)->status == SampleStatus::accepted);
  CHECK(store.count_by_status().total() == 1);
  CHECK(store.events_of(id).size() == 1);
}
