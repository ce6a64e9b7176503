#include <catch2/catch.hpp>

#include <vector>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/vector_table.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

namespace {

StoredContent text_content(const std::string& text) {
  return {"text", 0, 0, text};
}

// Records sample `i` with `status` and returns its id.
std::int64_t add_sample(MetadataStore& store, long long i, SampleStatus status) {
  NewSample sample = make_sample(i);
  sample.decision.status = status;
  return store.insert_sample(sample);
}

}  // namespace

TEST_CASE("vector rows are written, counted and read back", "[store][vectors]") {
  TempDir dir;
  MetadataStore store(dir.file("vectors.db"));
  VectorTable table(store.database());
  CHECK_FALSE(store.has_samples());
  CHECK(table.judged_ids().empty());

  const std::int64_t a = add_sample(store, 1, SampleStatus::accepted);
  const std::int64_t b = add_sample(store, 2, SampleStatus::accepted);
  const std::int64_t issue = add_sample(store, 3, SampleStatus::label_issue);
  add_sample(store, 4, SampleStatus::label_issue);  // no row: stored before rows were kept
  const std::int64_t rejected = add_sample(store, 5, SampleStatus::rejected);
  CHECK(store.has_samples());

  const std::vector<float> va = {1.0f, 2.0f}, vb = {3.0f, 4.0f}, vi = {5.0f, 6.0f};
  const std::string pixels = std::string("\x00\x7f\xff\x01", 4);  // bytes, NUL included
  table.put(b, vb.data(), 2, text_content("bee"));
  table.put(a, va.data(), 2, {"pixels", 2, 2, pixels});
  table.put(issue, vi.data(), 2, {"path", 0, 0, "/data/x.png"});
  table.put(rejected, vi.data(), 2, text_content("left out of every read"));

  // Accepted and label_issue samples with a row, ascending: what the vector
  // index must hold.
  CHECK(table.judged_ids() == std::vector<std::int64_t>{a, b, issue});
  std::vector<float> read;
  table.read_embeddings({b, a}, 2, read);
  CHECK(read == std::vector<float>{3.0f, 4.0f, 1.0f, 2.0f});
  CHECK_THROWS_WITH(table.read_embeddings({999}, 2, read), Catch::Contains("sample 999"));
  CHECK_THROWS_WITH(table.read_embeddings({a}, 3, read), Catch::Contains("expected 12"));
  CHECK(table.count_label_issues_without_row() == 1);

  const std::optional<StoredContent> content = table.content_of(a);
  REQUIRE(content);
  CHECK(content->kind == "pixels");
  CHECK(content->width == 2);
  CHECK(content->height == 2);
  CHECK(content->bytes == pixels);
  CHECK(table.content_of(b)->bytes == "bee");
  CHECK_FALSE(table.content_of(12345));

  SECTION("judged embeddings (accepted and label_issue), in id order, some at a time") {
    VectorReader reader(store.database(), 2);
    std::vector<std::int64_t> ids;
    std::vector<float> vectors;
    CHECK(reader.read(1, ids, vectors) == 1);
    CHECK(reader.read(5, ids, vectors) == 2);
    CHECK(reader.read(5, ids, vectors) == 0);
    CHECK(reader.read(5, ids, vectors) == 0);              // stays done
    CHECK(ids == std::vector<std::int64_t>{a, b, issue});  // not the rejected sample's row
    CHECK(vectors == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  }

  SECTION("judged rows carry status, label, embedding and content") {
    std::vector<JudgedVectorRow> rows;
    table.for_each_judged_row(2, [&](const JudgedVectorRow& row) { rows.push_back(row); });
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].sample_id == a);
    CHECK(rows[0].status == SampleStatus::accepted);
    CHECK(rows[0].label == 1);
    CHECK(rows[0].embedding == va);
    CHECK(rows[0].content.bytes == pixels);
    CHECK(rows[1].content.kind == "text");
    CHECK(rows[2].sample_id == issue);
    CHECK(rows[2].status == SampleStatus::label_issue);
    CHECK(rows[2].content.bytes == "/data/x.png");

    rows.clear();
    table.for_each_judged_row(std::nullopt,
                              [&](const JudgedVectorRow& row) { rows.push_back(row); });
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].embedding.empty());
  }

  SECTION("an embedding is replaced") {
    const std::vector<float> wider = {7.0f, 8.0f, 9.0f};
    table.set_embedding(a, wider.data(), 3);
    VectorReader reader(store.database(), 3);
    std::vector<std::int64_t> ids;
    std::vector<float> vectors;
    // b still has 2 floats: reading it as 3 names the sample.
    CHECK_THROWS_WITH(reader.read(5, ids, vectors),
                      Catch::Contains(fmt::format("stored embedding of sample {} has 8 bytes, "
                                                  "expected 12",
                                                  b)));
    CHECK(ids == std::vector<std::int64_t>{a});
    CHECK(vectors == wider);
  }

  SECTION("a row for an unknown sample or a second row is refused") {
    CHECK_THROWS_AS(table.put(999, va.data(), 2, text_content("x")), winnow::Error);
    CHECK_THROWS_AS(table.put(a, va.data(), 2, text_content("x")), winnow::Error);
    CHECK(table.judged_ids().size() == 3);
  }
}

TEST_CASE("vector rows roll back with their transaction", "[store][vectors]") {
  TempDir dir;
  MetadataStore store(dir.file("vectors.db"));
  VectorTable table(store.database());
  const std::int64_t a = add_sample(store, 1, SampleStatus::accepted);
  const std::vector<float> v = {1.0f};
  store.database().exec("BEGIN IMMEDIATE");
  table.put(a, v.data(), 1, text_content("a"));
  CHECK(table.judged_ids().size() == 1);
  store.database().exec("ROLLBACK");
  CHECK(table.judged_ids().empty());
  CHECK_FALSE(table.content_of(a));
}
