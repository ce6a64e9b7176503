#include <catch2/catch.hpp>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"
#include "winnow/store/vector_table.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

TEST_CASE("a recorded sample is found by id, key and content hash", "[store][samples]") {
  TempDir dir;
  MetadataStore store(dir.file("samples.db"));
  NewSample sample = make_sample(5, "laion");
  sample.annotations.push_back({"bob", 3});
  sample.annotations.push_back({"", 4});  // unknown annotator
  sample.gain = 0.25;
  sample.label_quality = 0.9;
  const std::int64_t id = store.insert_sample(sample);

  const auto by_key = store.find_by_external_key("sample-5");
  REQUIRE(by_key);
  CHECK(by_key->id == id);
  CHECK(by_key->content_hash == "hash-5");
  CHECK(by_key->label == 5);
  CHECK(by_key->source == "laion");
  CHECK(by_key->status == SampleStatus::accepted);
  CHECK_FALSE(by_key->duplicate_of);
  CHECK(by_key->gain == 0.25);
  CHECK(by_key->label_quality == 0.9);
  CHECK_FALSE(by_key->batch_id);
  CHECK(by_key->created_at.size() == 24);  // 2024-05-01T12:34:56.789Z
  CHECK(by_key->created_at == by_key->updated_at);
  CHECK(store.find_sample(id)->external_key == "sample-5");
  CHECK_FALSE(store.find_sample(id + 1));
  CHECK_FALSE(store.find_by_external_key("sample-6"));
  CHECK_FALSE(store.find_by_content_hash("hash-6"));

  const auto annotations = store.annotations_of(id);
  REQUIRE(annotations.size() == 3);
  CHECK(annotations[0].annotator == "annotator-2");
  CHECK(annotations[0].label == 5);
  CHECK(annotations[1].annotator == "bob");
  CHECK(annotations[1].label == 3);
  CHECK(annotations[2].annotator.empty());

  SECTION("an exact copy points at the original found by hash") {
    const auto original = store.find_by_content_hash("hash-5");
    REQUIRE(original);
    NewSample copy = make_sample(6, "laion");
    copy.content_hash = "hash-5";
    copy.decision = {SampleStatus::duplicate_exact, original->id, "same content hash", ""};
    const std::int64_t copy_id = store.insert_sample(copy);
    CHECK(store.find_by_content_hash("hash-5")->id == id);  // still the original
    CHECK(store.find_sample(copy_id)->duplicate_of == id);
    CHECK(store.events_of(copy_id).at(0).details_json.empty());
  }
}

TEST_CASE("a content hash is found in any epoch of its index, the lowest id first",
          "[store][samples]") {
  // The index is keyed by (id >> 18, content_hash): ids 1, 300,000 and
  // 600,000 are in epochs 0, 1 and 2. SQLite numbers a new row after the
  // largest id, so rows with chosen ids are written directly.
  TempDir dir;
  MetadataStore store(dir.file("epochs.db"));
  const std::int64_t first = store.insert_sample(make_sample(1));
  auto insert_at = [&](std::int64_t id, const std::string& hash) {
    Statement insert(store.database(),
                     "INSERT INTO samples (id, external_key, content_hash, status)"
                     " VALUES (?1, ?2, ?3, 'accepted')");
    insert.bind_all(id, "key-" + std::to_string(id), hash);
    insert.run();
  };
  insert_at(600000, "hash-far");
  const std::int64_t later = store.insert_sample(make_sample(7));
  REQUIRE(later == 600001);
  insert_at(300000, "hash-7");  // the same content, an earlier epoch

  CHECK(store.find_by_content_hash("hash-1")->id == first);
  CHECK(store.find_by_content_hash("hash-far")->id == 600000);
  CHECK(store.find_by_content_hash("hash-7")->id == 300000);
  CHECK_FALSE(store.find_by_content_hash("hash-2"));

  SECTION("ids far from the others, or negative, are found without probing empty epochs") {
    // A file written by other means: 2^60 is 2^42 epochs past the others.
    insert_at(std::int64_t{1} << 60, "hash-huge");
    insert_at(-5, "hash-negative");
    insert_at(-5 - (std::int64_t{1} << 40), "hash-7");  // the lowest id of this content
    CHECK(store.find_by_content_hash("hash-huge")->id == std::int64_t{1} << 60);
    CHECK(store.find_by_content_hash("hash-negative")->id == -5);
    CHECK(store.find_by_content_hash("hash-7")->id == -5 - (std::int64_t{1} << 40));
    CHECK_FALSE(store.find_by_content_hash("hash-2"));
  }
}

TEST_CASE("decisions can be revisited and every one is logged", "[store][samples]") {
  TempDir dir;
  MetadataStore store(dir.file("revisit.db"));
  const auto ids = store.insert_samples({make_sample(1), make_sample(2)});
  store.update_status(ids[1], {SampleStatus::duplicate_near, ids[0], "cosine 0.991 > 0.98",
                               R"({"cosine": 0.991, "threshold": 0.98})"});
  store.update_status(ids[1], {SampleStatus::accepted, std::nullopt, "manual review", ""});
  store.update_status(ids[1], {SampleStatus::label_issue, std::nullopt, "self-confidence 0.05",
                               R"({"threshold": 0.1})"});

  const auto sample = store.find_sample(ids[1]);
  CHECK(sample->status == SampleStatus::label_issue);
  CHECK_FALSE(sample->duplicate_of);
  const auto events = store.events_of(ids[1]);
  REQUIRE(events.size() == 4);
  CHECK(events[0].kind == kEventIngest);
  CHECK(events[1].kind == kEventRevisit);
  CHECK(events[1].decision == SampleStatus::duplicate_near);
  CHECK(events[1].reason == "cosine 0.991 > 0.98");
  CHECK(events[2].decision == SampleStatus::accepted);
  CHECK(events[3].decision == SampleStatus::label_issue);
  CHECK(store.events_of(ids[0]).size() == 1);
}

TEST_CASE("gains and label qualities are set in bulk, all or nothing", "[store][samples]") {
  TempDir dir;
  MetadataStore store(dir.file("scores.db"));
  std::vector<NewSample> batch;
  for (int i = 0; i < 100; ++i) {
    batch.push_back(make_sample(i));
  }
  const auto ids = store.insert_samples(batch);
  std::vector<SampleScore> gains;
  std::vector<SampleScore> qualities;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    gains.push_back({ids[i], 0.01 * static_cast<double>(i)});
    qualities.push_back({ids[i], 1.0 - 0.005 * static_cast<double>(i)});
  }
  store.set_gains(gains);
  store.set_label_qualities(qualities);
  CHECK(store.find_sample(ids[42])->gain == Approx(0.42));
  CHECK(store.find_sample(ids[42])->label_quality == Approx(0.79));

  std::vector<SampleScore> bad = {{ids[0], 5.0}, {99999, 1.0}};
  REQUIRE_THROWS_WITH(store.set_gains(bad), Catch::Contains("no sample with id 99999"));
  CHECK(store.find_sample(ids[0])->gain == 0.0);  // first update rolled back
  bad = {{ids[0], 5.0}, {ids[1], std::numeric_limits<double>::infinity()}};
  REQUIRE_THROWS_WITH(store.set_label_qualities(bad), Catch::Contains("non-finite"));
  CHECK(store.find_sample(ids[0])->label_quality == 1.0);
}

TEST_CASE("counts, accepted samples and export iteration", "[store][samples]") {
  TempDir dir;
  MetadataStore store(dir.file("reports.db"));
  std::vector<NewSample> batch;
  for (int i = 0; i < 30; ++i) {
    batch.push_back(make_sample(i, i % 3 == 0 ? "web" : "books"));
  }
  batch[29].source.clear();
  const auto ids = store.insert_samples(batch);
  store.update_status(ids[1], {SampleStatus::duplicate_near, ids[0], "near", ""});
  store.update_status(ids[2], {SampleStatus::rejected, std::nullopt, "broken image", ""});
  store.update_status(ids[3], {SampleStatus::label_issue, std::nullopt, "low quality", ""});

  const StatusCounts counts = store.count_by_status();
  CHECK(counts.total() == 30);
  CHECK(counts[SampleStatus::accepted] == 27);
  CHECK(counts[SampleStatus::duplicate_near] == 1);
  CHECK(counts[SampleStatus::rejected] == 1);
  CHECK(counts[SampleStatus::label_issue] == 1);
  CHECK(counts[SampleStatus::duplicate_exact] == 0);

  auto by_source = store.count_by_source();
  REQUIRE(by_source.size() == 3);
  CHECK(by_source["web"].total() == 10);  // 0, 3, ..., 27
  CHECK(by_source["web"][SampleStatus::label_issue] == 1);
  CHECK(by_source["books"].total() == 19);  // 20 minus sample 29
  CHECK(by_source["books"][SampleStatus::accepted] == 17);
  CHECK(by_source[""].total() == 1);

  const float vector[2] = {1.0F, 0.0F};
  VectorTable(store.database()).put(ids[0], vector, 2, {"text", 0, 0, "sample 0"});
  const auto accepted = store.accepted_samples();
  REQUIRE(accepted.size() == 27);
  CHECK(accepted[0].has_vector);
  CHECK(accepted[0].id == ids[0]);
  CHECK(accepted[1].id == ids[4]);
  CHECK(accepted[1].external_key == "sample-4");
  CHECK(accepted[1].label == 4);
  CHECK_FALSE(accepted[1].has_vector);  // no curation_vectors row: never embedded

  std::vector<std::int64_t> visited;
  store.for_each_sample([&](const SampleRecord& sample) { visited.push_back(sample.id); });
  CHECK(visited == ids);
  std::vector<std::string> rejected;
  store.for_each_sample(
      [&](const SampleRecord& sample) { rejected.push_back(sample.external_key); },
      SampleStatus::rejected);
  CHECK(rejected == std::vector<std::string>{"sample-2"});
}

TEST_CASE("key/value metadata", "[store][meta]") {
  TempDir dir;
  MetadataStore store(dir.file("meta.db"));
  CHECK_FALSE(store.get_meta("index.type"));
  store.set_meta("index.type", "HNSW32");
  store.set_meta("index.type", "Flat");
  store.set_meta("embedder", R"({"model": "clip-vit-b32", "dim": 512})");
  CHECK(store.get_meta("index.type") == std::optional<std::string>("Flat"));
  CHECK(store.get_meta("embedder")->find("clip") != std::string::npos);
  REQUIRE_THROWS_WITH(store.set_meta("", "x"), Catch::Contains("meta key is empty"));
}

namespace {

// The label-quality sums as a scan of the samples gives them.
std::vector<MetadataStore::LabelQualitySum> scanned_label_quality(MetadataStore& store) {
  Statement query(store.database(),
                  "SELECT label, count(*), total(label_quality) FROM samples "
                  "WHERE status IN ('accepted', 'label_issue') AND label IS NOT NULL "
                  "AND label_quality IS NOT NULL GROUP BY label ORDER BY label");
  std::vector<MetadataStore::LabelQualitySum> sums;
  while (query.step()) {
    sums.push_back({query.column_int64(0), query.column_int64(1), query.column_double(2)});
  }
  return sums;
}

void check_same_sums(MetadataStore& store) {
  const auto kept = store.label_quality_by_label();
  const auto scanned = scanned_label_quality(store);
  REQUIRE(kept.size() == scanned.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    INFO("label " << scanned[i].label);
    CHECK(kept[i].label == scanned[i].label);
    CHECK(kept[i].samples == scanned[i].samples);
    CHECK(kept[i].quality_sum == Approx(scanned[i].quality_sum).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("label-quality sums follow every write of a sample's status, label and quality",
          "[store]") {
  TempDir dir;
  MetadataStore store(dir.file("sums.db"));
  std::vector<std::int64_t> ids;
  std::vector<NewSample> batch;
  for (int i = 0; i < 40; ++i) {
    NewSample s = make_sample(i);
    s.label = i % 4;
    if (i % 5 != 0) s.label_quality = (i % 7) / 7.0;  // some without a quality
    if (i % 9 == 0) s.decision.status = SampleStatus::label_issue;
    if (i % 11 == 0) s.decision.status = SampleStatus::rejected;
    batch.push_back(s);
  }
  ids = store.insert_samples(batch);
  check_same_sums(store);

  // Qualities change (and appear where there was none).
  std::vector<SampleScore> qualities;
  for (std::size_t i = 0; i < ids.size(); i += 3) qualities.push_back({ids[i], 0.25 + i / 100.0});
  store.set_label_qualities(qualities);
  check_same_sums(store);

  // Statuses change: out of the sums (duplicate, rejected) and back in.
  store.update_status(ids[1], {SampleStatus::duplicate_near, ids[2], "near copy", ""});
  store.update_status(ids[4], {SampleStatus::rejected, std::nullopt, "bad", ""});
  store.update_status(ids[11], {SampleStatus::accepted, std::nullopt, "back", ""});
  store.update_status(ids[9], {SampleStatus::accepted, std::nullopt, "cleared", ""});
  check_same_sums(store);

  // Labels change: the quality moves from one label's sum to another's.
  store.relabel(ids[2], 3, "relabelled");
  store.relabel(ids[6], 0, "relabelled");
  check_same_sums(store);

  // A label whose every sample left is no row.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (store.find_sample(ids[i])->label == 1)
      store.update_status(ids[i], {SampleStatus::rejected, std::nullopt, "gone", ""});
  }
  check_same_sums(store);
  for (const auto& sum : store.label_quality_by_label()) CHECK(sum.label != 1);
}
