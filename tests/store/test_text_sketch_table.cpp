// TextSketchTable: sketches written a row at a time and read back by shingle
// length in the order written, rolled back with their transaction; bad
// sketches refused, and a damaged row named when read.
#include <catch2/catch.hpp>

#include <vector>

#include <fmt/format.h>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"
#include "winnow/store/text_sketch_table.h"
#include "winnow/store/transaction.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::TempDir;

namespace {

std::vector<StoredTextSketch> sketches_of(TextSketchTable& table, std::int64_t shingle) {
  std::vector<StoredTextSketch> sketches;
  table.for_each(shingle, [&](const StoredTextSketch& sketch) { sketches.push_back(sketch); });
  return sketches;
}

}  // namespace

TEST_CASE("text sketches round-trip by shingle length, in the order written",
          "[store][text_sketches]") {
  TempDir dir;
  MetadataStore store(dir.file("s.db"));
  TextSketchTable table(store.database());
  const std::array<std::uint64_t, 2> high = {0xffffffff00000001ULL, 0x8000000000000000ULL};
  for (int i = 1; i <= 7; ++i) store.insert_sample(test::make_sample(i));
  const std::int64_t far = (std::int64_t{1} << 40) + 3;  // sample ids are SQLite's rowids
  store.database().exec(
      fmt::format("INSERT INTO samples (id, external_key, content_hash, status) VALUES ({}, 'far', "
                  "'h', 'accepted')",
                  far)
          .c_str());
  table.add(5, {{7, 40, high}, {3, 0, {7, 0}}});
  table.add(4, {{4, 9, {1, 1}}});  // another shingle length
  table.add(5, {});                // nothing: no row
  table.add(5, {{far, 4294967294LL, {2, 3}}});

  const auto five = sketches_of(table, 5);
  REQUIRE(five.size() == 3);
  CHECK(five[0].sample_id == 7);
  CHECK(five[0].size == 40);
  CHECK(five[0].bits == high);
  CHECK(five[1].sample_id == 3);
  CHECK(five[1].size == 0);
  CHECK(five[1].bits == std::array<std::uint64_t, 2>{7, 0});
  CHECK(five[2].sample_id == far);
  CHECK(five[2].size == 4294967294LL);
  REQUIRE(sketches_of(table, 4).size() == 1);
  CHECK(sketches_of(table, 4)[0].sample_id == 4);
  CHECK(sketches_of(table, 3).empty());
  Statement rows(store.database(), "SELECT count(*) FROM text_sketches");
  REQUIRE(rows.step());
  CHECK(rows.column_int64(0) == 3);
}

TEST_CASE("text sketches written in a rolled-back transaction are gone", "[store][text_sketches]") {
  TempDir dir;
  MetadataStore store(dir.file("s.db"));
  TextSketchTable table(store.database());
  const std::int64_t kept = store.insert_sample(test::make_sample(1));
  table.add(5, {{kept, 2, {1, 0}}});
  {
    Transaction tx(store.database());
    const std::int64_t dropped = store.insert_sample(test::make_sample(2));
    table.add(5, {{dropped, 2, {2, 0}}});
    CHECK(sketches_of(table, 5).size() == 2);
  }  // not committed
  const auto sketches = sketches_of(table, 5);
  REQUIRE(sketches.size() == 1);
  CHECK(sketches[0].sample_id == kept);
}

TEST_CASE("bad text sketches are refused, and a damaged row is named when read",
          "[store][text_sketches]") {
  TempDir dir;
  MetadataStore store(dir.file("s.db"));
  TextSketchTable table(store.database());
  CHECK_THROWS_WITH(table.add(0, {{9, 1, {}}}), Catch::Contains("sample 9"));
  CHECK_THROWS_WITH(table.add(5, {{1, 1, {1, 0}}, {9, -1, {}}}),
                    Catch::Contains("sample 9") && Catch::Contains("size -1"));
  CHECK_THROWS_WITH(table.add(5, {{9, 4294967295LL, {}}}), Catch::Contains("sample 9"));
  CHECK_THROWS_WITH(table.add(5, {{0, 1, {}}}), Catch::Contains("sample 0"));
  CHECK_THROWS_WITH(table.add(5, {{9, 4, {0, 0}}}),
                    Catch::Contains("sample 9") && Catch::Contains("empty filter"));
  CHECK(sketches_of(table, 5).empty());

  // Bytes that are not whole sketches, written behind the table's back, are
  // refused by the CHECK constraint; with the constraints off, named when read.
  CHECK_THROWS_WITH(store.database().exec("INSERT INTO text_sketches VALUES (1, 5, x'00')"),
                    Catch::Contains("CHECK constraint failed"));
  store.database().exec("PRAGMA ignore_check_constraints = ON");
  store.database().exec("INSERT INTO text_sketches VALUES (1, 5, x'0102')");
  CHECK_THROWS_WITH(sketches_of(table, 5),
                    Catch::Contains("text_sketches row 1") && Catch::Contains("2 bytes"));
  store.database().exec("UPDATE text_sketches SET sketches = zeroblob(28) WHERE id = 1");
  CHECK_THROWS_WITH(sketches_of(table, 5),
                    Catch::Contains("text_sketches row 1") && Catch::Contains("sample id 0"));
  // An id past the last stored sample's (a reader would size its tables by it).
  table.add(5, {{1, 1, {1, 0}}});  // names sample 1, not stored yet
  store.database().exec("DELETE FROM text_sketches WHERE id = 1");
  CHECK_THROWS_WITH(sketches_of(table, 5), Catch::Contains("sample id 1,"));
  store.insert_sample(test::make_sample(1));
  CHECK(sketches_of(table, 5).size() == 1);
}

TEST_CASE("a text_sketches row ends with its checksum; zeroed filters are refused when read",
          "[store][text_sketches]") {
  TempDir dir;
  MetadataStore store(dir.file("s.db"));
  TextSketchTable table(store.database());
  for (int i = 1; i <= 3; ++i) store.insert_sample(test::make_sample(i));
  table.add(5, {{1, 12, {0x40, 0x1}}, {2, 3, {0x8, 0}}});
  {
    Statement length(store.database(), "SELECT length(sketches) FROM text_sketches");
    REQUIRE(length.step());
    CHECK(length.column_int64(0) == 2 * 28 + 8);
  }
  REQUIRE(sketches_of(table, 5).size() == 2);

  // The first sketch's filter bits zeroed in place (bytes 13-28), the
  // checksum left: a filter that rules every candidate out unread.
  // (|| makes text of blobs, whose length() counts characters: cast back.)
  store.database().exec(
      "UPDATE text_sketches SET sketches = CAST(substr(sketches, 1, 12) || zeroblob(16) || "
      "substr(sketches, 29) AS BLOB)");
  try {
    sketches_of(table, 5);
    FAIL("a row that does not match its checksum was read");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::corrupt);
    CHECK_THAT(std::string(e.what()), Catch::Contains("text_sketches row 1") &&
                                          Catch::Contains("checksum") &&
                                          Catch::Contains("DELETE FROM text_sketches"));
  }
  store.database().exec("DELETE FROM text_sketches");

  // A row from before the checksum (whole sketches only) is read, but an
  // empty filter for a set of shingles in it is refused all the same.
  store.database().exec(
      "INSERT INTO text_sketches (shingle, sketches) VALUES (5, "
      "x'030000000000000005000000"
      "00000000000000000000000000000000')");
  CHECK_THROWS_WITH(sketches_of(table, 5),
                    Catch::Contains("empty filter") && Catch::Contains("sample 3"));
}
