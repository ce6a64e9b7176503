// The ingest pipeline and the `winnow` CLI over a real SQLite file and a real
// index file in a temporary directory.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <set>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/curation_test_helpers.h"
#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/index/vector_index_io.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"
#include "winnow/store/vector_table.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using winnow::curation::test::edited_copy;
using winnow::curation::test::fashion_test;

std::string pixels_line(const ManifestRecord& r, const std::string& key, const std::string& label) {
  json j = {{"key", key},         {"pixels", r.pixels}, {"width", r.width},
            {"height", r.height}, {"label", label},     {"source", "fashion"}};
  return j.dump();
}

std::string write_file(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const auto& l : lines) f << l << "\n";
  return path;
}

// The first `n` test images of class `label`.
std::vector<const ManifestRecord*> of_class(const std::string& label, std::size_t n) {
  std::vector<const ManifestRecord*> out;
  for (const ManifestRecord& r : fashion_test()) {
    if (r.label == label) out.push_back(&r);
    if (out.size() == n) break;
  }
  return out;
}

// The default config, but judging a label once 30 samples carry it: these
// tests' classes have 30 to 40.
CurationConfig judged_from_30() {
  CurationConfig config;
  config.label_k = 30;
  return config;
}

BatchReport ingest_file(winnow::test::Pipeline& p, const std::string& path) {
  return p.ingest_batch(path, file_checksum(path), read_manifest(path));
}

}  // namespace

TEST_CASE("ingest pipeline: statuses, exactly-once batches, index rebuild", "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, judged_from_30());

  auto trousers = of_class("1", 41);  // 40 accepted + 1 mislabelled
  auto sneakers = of_class("7", 40);
  REQUIRE(trousers.size() == 41);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < 40; ++i) {  // interleaved: both classes have neighbours early
    lines.push_back(pixels_line(*trousers[i], "t" + std::to_string(i), "1"));
    lines.push_back(pixels_line(*sneakers[i], "s" + std::to_string(i), "7"));
  }
  lines.push_back(pixels_line(*trousers[3], "exact-copy", "1"));  // duplicate_exact
  lines.push_back(
      pixels_line(edited_copy(*trousers[5], 1, 0, 1.0, 0.0, 1), "shifted", "1"));  // duplicate_near
  lines.push_back(pixels_line(*trousers[40], "mislabelled", "7"));                 // label_issue
  lines.push_back("{not json");                                                    // rejected
  lines.push_back(R"({"pixels":[1,2,3,4],"label":1})");  // rejected: no key
  const std::string manifest = write_file(dir.file("m1.jsonl"), lines);

  {
    winnow::test::Pipeline p(db);
    CHECK(p.index_info().rebuilt);  // no index file yet
    BatchReport r = ingest_file(p, manifest);
    CHECK_FALSE(r.skipped);
    CHECK(r.counts[SampleStatus::accepted] == 80);
    CHECK(r.counts[SampleStatus::duplicate_exact] == 1);
    CHECK(r.counts[SampleStatus::duplicate_near] == 1);
    CHECK(r.counts[SampleStatus::label_issue] == 1);
    CHECK(r.counts[SampleStatus::rejected] == 2);
    CHECK(p.index_info().vectors == 81);  // the accepted samples and the label issue

    auto exact = p.store().find_by_external_key("exact-copy");
    REQUIRE(exact);
    CHECK(exact->duplicate_of == p.store().find_by_external_key("t3")->id);
    auto near = p.store().find_by_external_key("shifted");
    REQUIRE(near);
    CHECK(near->status == SampleStatus::duplicate_near);
    CHECK(near->duplicate_of == p.store().find_by_external_key("t5")->id);
    auto events = p.store().events_of(near->id);
    REQUIRE(events.size() == 1);
    json details = json::parse(events[0].details_json);
    CHECK(details["near_duplicate"]["threshold"].get<double>() == 0.99);
    CHECK(details["near_duplicate"]["best_similarity"].get<double>() >= 0.99);
    auto bad = p.store().find_by_external_key("mislabelled");
    REQUIRE(bad);
    CHECK(bad->status == SampleStatus::label_issue);
    CHECK(*bad->label_quality < 0.1);

    // The same manifest again: skipped, nothing recorded twice.
    BatchReport again = ingest_file(p, manifest);
    CHECK(again.skipped);
    CHECK(again.batch_id == r.batch_id);
    CHECK(p.store().count_by_status().total() == 85);
  }

  // Index file deleted: rebuilt from the stored vectors; a shifted copy of a
  // first-batch image is still found (contents are kept for verification).
  REQUIRE(std::filesystem::remove(db + ".index"));
  {
    winnow::test::Pipeline p(db);
    CHECK(p.index_info().rebuilt);
    CHECK(p.index_info().rebuild_reason.rfind("missing", 0) == 0);
    CHECK(p.index_info().vectors == 81);
    const std::string m2 = write_file(
        dir.file("m2.jsonl"),
        {pixels_line(edited_copy(*sneakers[7], 0, 1, 1.0, 0.0, 2), "shifted-2", "7"),
         pixels_line(*sneakers[9], "exact-2", "7"), pixels_line(*trousers[3], "t3", "1")});
    BatchReport r = ingest_file(p, m2);
    CHECK(r.counts[SampleStatus::duplicate_near] == 1);
    CHECK(r.counts[SampleStatus::duplicate_exact] == 1);
    CHECK(r.counts[SampleStatus::rejected] == 1);  // key t3 already present
    CHECK(p.store().find_by_external_key("shifted-2")->duplicate_of ==
          p.store().find_by_external_key("s7")->id);
    CHECK(p.rejudge().gains_updated == 80);
  }
  {
    winnow::test::Pipeline p(db);
    CHECK_FALSE(p.index_info().rebuilt);  // saved after the batch, fingerprint matches
    CHECK(p.store().count_by_status().total() == 88);
  }
}

TEST_CASE("ingest pipeline: an old index file is caught up from the store, not rebuilt",
          "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  // Not re-judged after each batch, so that the regain below has a label to flag.
  CurationConfig config = judged_from_30();
  config.label_rejudge_growth = 0.0;
  winnow::test::Pipeline::init(db, config);
  auto trousers = of_class("1", 30);
  auto sneakers = of_class("7", 30);
  std::vector<std::string> first, second;
  for (std::size_t i = 0; i < 30; ++i) {
    (i < 20 ? first : second).push_back(pixels_line(*trousers[i], "t" + std::to_string(i), "1"));
    (i < 20 ? first : second).push_back(pixels_line(*sneakers[i], "s" + std::to_string(i), "7"));
  }
  // Mislabelled first, before either label is established: accepted now,
  // flagged by a later re-judgement.
  auto extra = of_class("1", 32);
  first.insert(first.begin(), pixels_line(*extra[31], "mislabelled", "7"));
  const std::string m1 = write_file(dir.file("m1.jsonl"), first);
  const std::string m2 = write_file(dir.file("m2.jsonl"), second);
  const auto judged_ids = [&](winnow::test::Pipeline& p) {  // accepted and label_issue
    return VectorTable(p.store().database()).judged_ids();
  };
  const auto indexed_ids = [](const std::string& path) {  // of the index file
    std::vector<std::int64_t> ids = index::load_vector_index(path).index->ids();
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  {
    winnow::test::Pipeline p(db);
    p.set_index_snapshots(IndexSnapshots::every_batch);
    CHECK(ingest_file(p, m1).index_saved);
  }
  // The store as it was after the first batch, for the end of the test.
  const std::string first_db = dir.file("first.db");
  std::filesystem::copy_file(db, first_db);
  if (std::filesystem::exists(db + "-wal"))
    std::filesystem::copy_file(db + "-wal", first_db + "-wal");
  {
    winnow::test::Pipeline p(db);
    p.set_index_snapshots(IndexSnapshots::never);
    CHECK_FALSE(p.index_info().rebuilt);
    CHECK(p.index_info().caught_up.added == 0);
    const BatchReport r = ingest_file(p, m2);
    CHECK_FALSE(r.index_saved);
    CHECK(r.counts[SampleStatus::accepted] == 20);
  }
  // The file holds the first batch only; a new process adds the second
  // batch's vectors from the store instead of rebuilding everything.
  CHECK(indexed_ids(db + ".index").size() == 41);
  const std::string old_snapshot = dir.file("old.index");
  {
    winnow::test::Pipeline p(db);
    CHECK_FALSE(p.index_info().rebuilt);
    CHECK(p.index_info().caught_up.added == 20);
    CHECK(p.index_info().caught_up.removed == 0);
    CHECK(p.index_info().vectors == 61);
    // A near copy of a second-batch image is found through the caught-up index.
    const std::string m3 =
        write_file(dir.file("m3.jsonl"),
                   {pixels_line(edited_copy(*sneakers[25], 1, 0, 1.0, 0.0, 3), "near-s25", "7")});
    p.set_index_snapshots(IndexSnapshots::every_batch);
    ingest_file(p, m3);
    CHECK(p.store().find_by_external_key("near-s25")->duplicate_of ==
          p.store().find_by_external_key("s25")->id);
    CHECK(indexed_ids(db + ".index") == judged_ids(p));
    std::filesystem::copy_file(db + ".index", old_snapshot);
    // Samples flagged by a regain keep their vectors in the index: the file
    // from before it still holds exactly the judged samples.
    RejudgeOptions labels;
    labels.labels = true;
    REQUIRE(p.rejudge(labels).newly_flagged > 0);
    CHECK(indexed_ids(db + ".index") == judged_ids(p));
  }
  std::filesystem::copy_file(old_snapshot, db + ".index",
                             std::filesystem::copy_options::overwrite_existing);
  std::size_t judged_now = 0;
  {
    winnow::test::Pipeline p(db);
    CHECK_FALSE(p.index_info().rebuilt);
    CHECK(p.index_info().caught_up.added == 0);
    CHECK(p.index_info().caught_up.removed == 0);
    judged_now = judged_ids(p).size();
    CHECK(p.index_info().vectors == judged_now);
  }
  // A file that holds samples its store does not (a store restored from
  // before the second batch): they are removed, nothing is rebuilt.
  std::filesystem::copy_file(old_snapshot, first_db + ".index");
  winnow::test::Pipeline p(first_db);
  CHECK_FALSE(p.index_info().rebuilt);
  CHECK(p.index_info().caught_up.added == 0);
  CHECK(p.index_info().caught_up.removed == judged_now - judged_ids(p).size());
  CHECK(p.index_info().caught_up.removed >= 20);
  CHECK(p.index_info().vectors == judged_ids(p).size());
}

TEST_CASE("ingest pipeline: a clean end saves what the batches left unsaved, and only that",
          "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  auto trousers = of_class("1", 20);
  std::vector<std::string> first, second;
  for (std::size_t i = 0; i < 20; ++i) {
    (i < 10 ? first : second).push_back(pixels_line(*trousers[i], "t" + std::to_string(i), "1"));
  }
  const std::string m1 = write_file(dir.file("m1.jsonl"), first);
  const std::string m2 = write_file(dir.file("m2.jsonl"), second);
  {
    winnow::test::Pipeline p(db);
    p.set_index_snapshots(IndexSnapshots::never);  // the batches leave it to the end
    CHECK_FALSE(p.save_index_if_behind());         // nothing inserted yet
    CHECK_FALSE(ingest_file(p, m1).index_saved);
    CHECK(p.save_index_if_behind());
    CHECK_FALSE(p.save_index_if_behind());  // saved already
  }
  {
    winnow::test::Pipeline p(db);
    CHECK_FALSE(p.index_info().rebuilt);
    CHECK(p.index_info().caught_up.added == 0);
    CHECK(p.index_info().vectors == 10);
    CHECK_FALSE(p.save_index_if_behind());  // opened current: no rewrite
    // A process that ends without saving (killed) ...
    p.set_index_snapshots(IndexSnapshots::never);
    CHECK_FALSE(ingest_file(p, m2).index_saved);
  }
  {
    // ... leaves the next one to catch up, which is then behind the file.
    winnow::test::Pipeline p(db);
    CHECK(p.index_info().caught_up.added == 10);
    CHECK(p.save_index_if_behind());
  }
  winnow::test::Pipeline p(db);
  CHECK(p.index_info().caught_up.added == 0);
  CHECK(p.index_info().vectors == 20);
}

TEST_CASE("ingest pipeline: another dataset's index file under this one's name is rebuilt",
          "[ingest]") {
  // Two datasets whose sample ids coincide (1..40) but whose vectors do not:
  // a catch-up comparing ids alone would keep the other's vectors.
  winnow::test::TempDir dir;
  const std::string ours = dir.file("ours.db");
  const std::string theirs = dir.file("theirs.db");
  auto trousers = of_class("1", 40);
  auto sneakers = of_class("7", 40);
  std::vector<std::string> our_lines, their_lines;
  for (std::size_t i = 0; i < 40; ++i) {
    our_lines.push_back(pixels_line(*trousers[i], "t" + std::to_string(i), "1"));
    their_lines.push_back(pixels_line(*sneakers[i], "s" + std::to_string(i), "7"));
  }
  for (const auto& [db, lines] : {std::pair{ours, our_lines}, std::pair{theirs, their_lines}}) {
    winnow::test::Pipeline::init(db, CurationConfig{});
    winnow::test::Pipeline p(db);
    p.set_index_snapshots(IndexSnapshots::every_batch);
    REQUIRE(ingest_file(p, write_file(db + ".jsonl", lines)).index_saved);
  }
  std::filesystem::copy_file(theirs + ".index", ours + ".index",
                             std::filesystem::copy_options::overwrite_existing);
  {
    winnow::test::Pipeline p(ours);
    CHECK(p.index_info().rebuilt);
    CHECK_THAT(p.index_info().rebuild_reason,
               Catch::Contains("foreign") && Catch::Contains("is not a snapshot of"));
    // A near copy of our trouser is found through the index: ours, not
    // their sneakers under the same ids.
    const std::string copy =
        write_file(dir.file("copy.jsonl"),
                   {pixels_line(edited_copy(*trousers[5], 1, 0, 1.0, 0.0, 3), "t5-shifted", "1")});
    ingest_file(p, copy);
    CHECK(p.store().find_by_external_key("t5-shifted")->duplicate_of ==
          p.store().find_by_external_key("t5")->id);
  }
  // Our own snapshot, saved by that rebuild, loads as before.
  winnow::test::Pipeline p(ours);
  CHECK_FALSE(p.index_info().rebuilt);
}

TEST_CASE("ingest pipeline: text duplicates with hashed n-grams", "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("text.db");
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  winnow::test::Pipeline::init(db, config);
  winnow::test::Pipeline p(db);
  const std::string m = write_file(
      dir.file("t.jsonl"),
      {R"({"key":"a","text":"The quick brown fox jumps over the lazy dog near the river bank today."})",
       R"({"key":"b","text":"Completely different sentence about databases and vector indexes."})",
       R"({"key":"c","text":"The quick brown fox jumps over the lazy dog near the river bank today."})",
       R"({"key":"d","text":"The quick brown fox jumps over the lazy dog near the river bank today!"})",
       R"({"key":"e","pixels":[1,2,3,4]})"});
  BatchReport r = ingest_file(p, m);
  CHECK(r.counts[SampleStatus::accepted] == 2);
  CHECK(r.counts[SampleStatus::duplicate_exact] == 1);
  CHECK(r.counts[SampleStatus::duplicate_near] == 1);
  CHECK(r.counts[SampleStatus::rejected] == 1);  // pixels cannot be embedded as text
  CHECK(p.store().find_by_external_key("d")->duplicate_of ==
        p.store().find_by_external_key("a")->id);
}

// The stored-sample filter (stored_sample_filter.h) answers most content-hash
// and key lookups from memory; it must still see every stored sample, the
// ones another process wrote between this one's batches included.
TEST_CASE("ingest pipeline: exact copies and repeated keys of samples another process stored",
          "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("two.db");
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  winnow::test::Pipeline::init(db, config);
  // Texts of ten random words each: no two are near duplicates.
  auto text = [](const std::string& key, int n) {
    std::mt19937 rng(static_cast<unsigned>(n));
    std::string words;
    for (int w = 0; w < 10; ++w)
      words += fmt::format("{}w{} ", char('a' + rng() % 26), rng() % 100000);
    return fmt::format(R"({{"key":"{}","text":"{}"}})", key, words);
  };
  winnow::test::Pipeline first(db);
  winnow::test::Pipeline second(db);  // another writer of the dataset, as another process is
  std::vector<std::string> batch1, batch2, batch3;
  for (int i = 0; i < 300; ++i) batch1.push_back(text("a" + std::to_string(i), i));
  for (int i = 300; i < 600; ++i) batch2.push_back(text("b" + std::to_string(i), i));
  // Two batches, so that the first writer's filter holds samples before the
  // other writer's come.
  const std::vector<std::string> batch1a(batch1.begin(), batch1.begin() + 150);
  const std::vector<std::string> batch1b(batch1.begin() + 150, batch1.end());
  REQUIRE(ingest_file(first, write_file(dir.file("1a.jsonl"), batch1a))
              .counts[SampleStatus::accepted] == 150);
  REQUIRE(ingest_file(first, write_file(dir.file("1b.jsonl"), batch1b))
              .counts[SampleStatus::accepted] == 150);
  REQUIRE(
      ingest_file(second, write_file(dir.file("2.jsonl"), batch2)).counts[SampleStatus::accepted] ==
      300);
  // The first writer again: copies of both writers' samples under new keys,
  // and keys both writers used, each once.
  for (int i = 0; i < 600; i += 10) batch3.push_back(text("copy" + std::to_string(i), i));
  for (int i = 5; i < 600; i += 10) {
    batch3.push_back(text((i < 300 ? "a" : "b") + std::to_string(i), 100000 + i));
  }
  const BatchReport r = ingest_file(first, write_file(dir.file("3.jsonl"), batch3));
  CHECK(r.counts[SampleStatus::duplicate_exact] == 60);
  CHECK(r.counts[SampleStatus::rejected] == 60);
  CHECK(r.counts[SampleStatus::accepted] == 0);
  CHECK(first.store().find_by_external_key("copy590")->duplicate_of ==
        first.store().find_by_external_key("b590")->id);
}

TEST_CASE("ingest pipeline: a dataset keeps the index parameters resolved at its creation",
          "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("h.db");
  CurationConfig config;
  config.embedder = "provided(dim=4)";
  config.index = "hnsw";  // the defaults of the day, written out by init
  winnow::test::Pipeline::init(db, config);
  {
    winnow::test::Pipeline pipeline(db);
    CHECK(pipeline.config().index == index::canonical_vector_index_config("hnsw"));
    // As a dataset created by an older winnow, whose defaults were others.
    pipeline.store().set_meta("index.type", "hnsw(M=8,efConstruction=20,efSearch=16)");
  }
  winnow::test::Pipeline reopened(db);
  CHECK(reopened.config().index == "hnsw(M=8,efConstruction=20,efSearch=16)");
}

TEST_CASE("ingest pipeline: an uninitialised database is refused", "[ingest]") {
  winnow::test::TempDir dir;
  CHECK_THROWS_AS(winnow::test::Pipeline(dir.file("missing.db")), winnow::Error);
}

namespace {

struct Run {
  int rc = -1;
  std::string out;
};

Run run_cli(const winnow::test::TempDir& dir, const std::string& args) {
  const std::string out = dir.file("cli.out");
  const std::string cmd =
      std::string(WINNOW_CLI_PATH) + " " + args + " > " + out + " 2> " + dir.file("cli.err");
  const int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  r.out = ss.str();
  return r;
}

}  // namespace

TEST_CASE("winnow CLI: init, ingest, status --json, export, exit codes", "[ingest][cli]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("cli.db");
  const std::string m = write_file(
      dir.file("m.jsonl"),
      {R"({"key":"a","text":"alpha beta gamma delta epsilon zeta eta theta","label":"x","source":"s1"})",
       R"({"key":"b","text":"alpha beta gamma delta epsilon zeta eta theta","label":"x","source":"s1"})",
       R"({"key":"c","text":"a totally unrelated line of text about cooking pasta","source":"s2"})",
       "{oops"});
  CHECK(run_cli(dir, "init --db " + db + " --embedder 'hashed-ngrams(n=3,dim=128)'").rc == 0);
  Run first = run_cli(dir, "ingest --db " + db + " --quiet " + m);
  REQUIRE(first.rc == 0);
  // The writer's phases are disjoint parts of the batch's time.
  const json summary = json::parse(first.out);
  double writer_seconds = 0.0;
  for (const char* phase : {"read", "prepare_first_block", "decide", "wait_for_pool",
                            "rejudge_labels", "commit", "save_index"}) {
    const double s = summary["seconds_by_phase"].at(phase).get<double>();
    CHECK(s >= 0.0);
    writer_seconds += s;
  }
  CHECK(summary["seconds_by_phase"].at("pool_prepare").get<double>() >= 0.0);
  CHECK(writer_seconds <= summary["seconds"].get<double>());
  CHECK(run_cli(dir, "ingest --db " + db + " " + m).rc == 0);  // skipped
  Run st = run_cli(dir, "status --db " + db + " --json");
  REQUIRE(st.rc == 0);
  json j = json::parse(st.out);
  CHECK(j["total"] == 4);
  CHECK(j["accepted"] == 2);
  CHECK(j["duplicate_exact"] == 1);
  CHECK(j["rejected"] == 1);
  CHECK(j["sources"]["s1"]["total"] == 2);
  CHECK(j["index"]["vectors"] == 2);
  CHECK(j["index"]["type"] == "flat");
  CHECK_FALSE(j["index"].contains("caught_up_on_open"));  // ingest saved the index at its end
  CHECK(j["last_batch"]["state"] == "done");
  Run ex = run_cli(dir, "export --db " + db + " --status accepted");
  CHECK(ex.rc == 0);
  CHECK(std::count(ex.out.begin(), ex.out.end(), '\n') == 2);
  Run csv = run_cli(dir, "export --db " + db + " --format csv");
  CHECK(csv.rc == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 5);
  CHECK(run_cli(dir, "regain --db " + db).rc == 0);
  CHECK(run_cli(dir, "export --db " + db + " --status bogus").rc == 1);
  CHECK(run_cli(dir, "ingest --db " + db + " " + dir.file("missing.jsonl")).rc == 1);
  CHECK(run_cli(dir, "status --db " + dir.file("nope.db")).rc == 1);
  CHECK(run_cli(dir, "frobnicate").rc == 1);
  CHECK(run_cli(dir, "status --help").rc == 0);
}

TEST_CASE("winnow CLI: rejection reasons in ingest's summary and in export, versions",
          "[ingest][cli]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("why.db");
  // Under the default pixels embedder a text record cannot be embedded; three
  // records have no content; one line is not JSON.
  std::string pixels = "[";
  for (int i = 0; i < 28 * 28; ++i)
    pixels += std::to_string(i % 251) + (i + 1 < 28 * 28 ? "," : "]");
  const std::string m = write_file(
      dir.file("m.jsonl"),
      {R"({"key":"p1","label":"1","pixels":)" + pixels + "}", R"({"key":"t1","text":"some words"})",
       R"({"key":"t2","text":"other words"})", R"({"key":"n1","label":"a"})",
       R"({"key":"n2","label":"b"})", R"({"key":"n3"})", "{oops"});
  REQUIRE(run_cli(dir, "init --db " + db).rc == 0);
  const Run ingest = run_cli(dir, "ingest --db " + db + " " + m);
  REQUIRE(ingest.rc == 0);
  const json summary = json::parse(ingest.out);
  CHECK(summary["counts"]["rejected"] == 6);
  const json& reasons = summary["rejections"];
  REQUIRE(reasons.size() == 3);
  // Most frequent first; like reasons (other keys, other lines) are one group.
  CHECK(reasons[0]["count"] == 3);
  CHECK(reasons[0]["example_key"] == "n1");
  CHECK(reasons[0]["reason"].get<std::string>().find("no content") != std::string::npos);
  CHECK(reasons[1]["count"] == 2);
  CHECK(reasons[1]["example_key"] == "t1");
  CHECK(reasons[1]["reason"].get<std::string>().find("cannot embed") != std::string::npos);
  CHECK(reasons[2]["count"] == 1);
  CHECK(reasons[2]["example_line"] == 7);
  CHECK(reasons[2]["reason"].get<std::string>().find("invalid JSON") != std::string::npos);

  // export: the reason of every sample, and with --details the decision's details.
  const Run csv = run_cli(dir, "export --db " + db + " --format csv --status rejected");
  REQUIRE(csv.rc == 0);
  CHECK(csv.out.rfind("id,key,content_hash,label,source,status,duplicate_of,duplicate_of_key,"
                      "label_quality,gain,batch_id,created_at,reason,review,reviewer,annotations,"
                      "majority_label,consensus_label,consensus_posterior,image_width,"
                      "image_height,image_issues,"
                      "blurry_score,dark_score,bright_score,low_information_score,"
                      "grayscale_score,odd_aspect_ratio_score,odd_size_score\n",
                      0) == 0);
  CHECK(csv.out.find("no content") != std::string::npos);
  const Run details = run_cli(dir, "export --db " + db + " --details --status accepted");
  REQUIRE(details.rc == 0);
  const json accepted = json::parse(details.out.substr(0, details.out.find('\n')));
  CHECK(accepted["key"] == "p1");
  CHECK(!accepted["reason"].get<std::string>().empty());
  CHECK(accepted["details"].is_object());

  // Which winnow made and last wrote the database; --version on the program.
  const Run status = run_cli(dir, "status --db " + db + " --json");
  REQUIRE(status.rc == 0);
  const json versions = json::parse(status.out)["winnow"];
  CHECK(versions["database_created_by"] == versions["version"]);
  CHECK(versions["database_written_by"] == versions["version"]);
  const Run version = run_cli(dir, "--version");
  CHECK(version.rc == 0);
  CHECK(version.out == "winnow " + versions["version"].get<std::string>() + "\n");
}

namespace {

// A text dataset (a cheap embedder) in `dir`, opened.
std::unique_ptr<winnow::test::Pipeline> text_pipeline(
    const winnow::test::TempDir& dir, int micro_batch = CurationConfig{}.micro_batch) {
  const std::string db = dir.file("text.db");
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=64)";
  config.micro_batch = micro_batch;
  winnow::test::Pipeline::init(db, config);
  return std::make_unique<winnow::test::Pipeline>(db);
}

}  // namespace

TEST_CASE("numeric and named labels never share an id and out-of-range numbers stay names",
          "[ingest][hardening]") {
  winnow::test::TempDir dir;
  const auto pipeline = text_pipeline(dir);
  winnow::test::Pipeline& p = *pipeline;
  const std::vector<std::string> labels = {"cat", "dog",        "-1",         "-2",        "1",
                                           "007", "4294967297", "2147483647", "2147483648"};
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    lines.push_back(json{
        {"key", "k" + std::to_string(i)},
        {"text", "sample text number " + std::to_string(i * 31)},
        {"label",
         labels[i]}}.dump());
  }
  ingest_file(p, write_file(dir.file("m.jsonl"), lines));
  std::set<std::int64_t> ids;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    INFO(labels[i]);
    const auto sample = p.store().find_by_external_key("k" + std::to_string(i));
    REQUIRE(sample);
    REQUIRE(sample->label);
    ids.insert(*sample->label);
    // Each label reads back as written (numbers in canonical form).
    CHECK(p.label_names().name_of(*sample->label) == (labels[i] == "007" ? "7" : labels[i]));
  }
  CHECK(ids.size() == labels.size());  // "-1" is not "cat", 4294967297 is not 1
}

TEST_CASE("a stop request rolls the batch back and leaves the index as the store is",
          "[ingest][hardening]") {
  winnow::test::TempDir dir;
  const auto pipeline = text_pipeline(dir, 16);
  winnow::test::Pipeline& p = *pipeline;
  std::vector<std::string> lines;
  for (std::uint64_t i = 0; i < 200; ++i) {
    // Three unrelated 20-digit numbers: no two texts share enough 5-codepoint
    // shingles to be near duplicates (texts like "a distinct text N" are).
    const auto digits = [](std::uint64_t x) {
      return std::to_string((x + 1) * 0x9E3779B97F4A7C15ull);
    };
    lines.push_back(
        json{{"key", "k" + std::to_string(i)},
             {"text", digits(3 * i) + " " + digits(3 * i + 1) + " " + digits(3 * i + 2)}}
            .dump());
  }
  const std::string path = write_file(dir.file("m.jsonl"), lines);
  ManifestReader reader(path);
  std::atomic<bool> stop{false};
  std::size_t read = 0;
  // Stops after several chunks have been written to the store and the index.
  const EntrySource source = [&](ManifestEntry& entry) {
    if (++read == 100) stop = true;
    return reader.next(entry);
  };
  CHECK_THROWS_AS(p.ingest_batch("m.jsonl", file_checksum(path), source, &stop), BatchInterrupted);
  CHECK(p.store().count_by_status().total() == 0);
  CHECK(p.index_info().vectors == 0);
  // The next batch gets the rolled-back ids again; nothing stale is found.
  const BatchReport again = ingest_file(p, path);
  CHECK(again.counts[SampleStatus::accepted] == 200);
  CHECK(p.index_info().vectors == 200);
}

// The contents the ingest keeps for verification (StoredContentCache) hold
// those of a batch that rolls back; SQLite hands its ids out again, so the
// next batch's candidates must not be verified against them.
TEST_CASE("contents read in a rolled-back batch are not used for the next one's candidates",
          "[ingest][hardening]") {
  winnow::test::TempDir dir;
  const auto digits = [](std::uint64_t x) {
    return std::to_string((x + 1) * 0x9E3779B97F4A7C15ull);
  };
  // 80 unrelated texts, then near copies ("!" added) of the first 20, whose
  // originals are then in earlier chunks and read back from the store, then
  // `filler` more unrelated texts.
  const auto lines_from = [&](std::uint64_t seed, const std::string& key, int filler) {
    std::vector<std::string> texts, lines;
    for (std::uint64_t i = 0; i < 80 + static_cast<std::uint64_t>(filler); ++i) {
      texts.push_back(digits(seed + 3 * i) + " " + digits(seed + 3 * i + 1) + " " +
                      digits(seed + 3 * i + 2));
    }
    for (std::size_t i = 0; i < 80; ++i) {
      lines.push_back(json{{"key", key + std::to_string(i)}, {"text", texts[i]}}.dump());
    }
    for (std::size_t i = 0; i < 20; ++i) {
      lines.push_back(
          json{{"key", key + "copy" + std::to_string(i)}, {"text", texts[i] + "!"}}.dump());
    }
    for (std::size_t i = 80; i < texts.size(); ++i) {
      lines.push_back(json{{"key", key + std::to_string(i)}, {"text", texts[i]}}.dump());
    }
    return lines;
  };
  const std::string rolled_back = write_file(dir.file("b.jsonl"), lines_from(0, "b", 40));
  const std::string next = write_file(dir.file("c.jsonl"), lines_from(100000, "c", 0));

  const auto pipeline = text_pipeline(dir, 16);
  winnow::test::Pipeline& p = *pipeline;
  ManifestReader reader(rolled_back);
  std::atomic<bool> stop{false};
  std::size_t read = 0;
  const EntrySource source = [&](ManifestEntry& entry) {
    if (++read == 120) stop = true;  // after the copies' chunks were decided
    return reader.next(entry);
  };
  REQUIRE_THROWS_AS(p.ingest_batch("b.jsonl", file_checksum(rolled_back), source, &stop),
                    BatchInterrupted);
  REQUIRE(p.store().count_by_status().total() == 0);
  const BatchReport after = ingest_file(p, next);

  winnow::test::TempDir fresh_dir;
  const auto fresh = text_pipeline(fresh_dir, 16);
  const BatchReport alone = ingest_file(*fresh, next);
  CHECK(alone.counts[SampleStatus::duplicate_near] == 20);
  CHECK(after.counts[SampleStatus::duplicate_near] == alone.counts[SampleStatus::duplicate_near]);
  CHECK(after.counts[SampleStatus::accepted] == alone.counts[SampleStatus::accepted]);
}

// The issue-19 case: with the defaults, re-submitted copies (1-pixel shift,
// brightness within 10%, noise sigma 2 to 5) are near duplicates of their
// originals, and so are copies of a sample flagged as a label issue (it stays
// in the index, a candidate like the accepted ones): in the same chunk, in a
// later batch, and after a reopen.
TEST_CASE("ingest pipeline: perturbed copies are near duplicates, of flagged samples too",
          "[ingest][near]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, judged_from_30());

  auto trousers = of_class("1", 41);
  auto sneakers = of_class("7", 40);
  REQUIRE(trousers.size() == 41);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < 40; ++i) {
    lines.push_back(pixels_line(*trousers[i], "t" + std::to_string(i), "1"));
    lines.push_back(pixels_line(*sneakers[i], "s" + std::to_string(i), "7"));
  }
  const ManifestRecord& flagged = *trousers[40];
  // Copies as a user makes them: every shift direction, brightness and noise varied.
  const int kDx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
  const int kDy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
  for (int c = 0; c < 16; ++c) {
    const double factor = 0.9 + 0.2 * c / 15.0;
    const double sigma = 2.0 + 3.0 * (c % 4) / 3.0;
    const auto* src =
        c % 2 == 0 ? trousers[static_cast<std::size_t>(c)] : sneakers[static_cast<std::size_t>(c)];
    lines.push_back(pixels_line(
        edited_copy(*src, kDx[c % 8], kDy[c % 8], factor, sigma, static_cast<unsigned>(c)),
        "copy-" + std::to_string(c), c % 2 == 0 ? "1" : "7"));
  }
  // After the copies: the first copy's match wrote the chunk so far, so the
  // labels have their support (label_k accepted samples) and this is flagged.
  lines.push_back(pixels_line(flagged, "mislabelled", "7"));  // label_issue
  lines.push_back(pixels_line(edited_copy(flagged, 1, 1, 1.1, 5.0, 100), "flagged-copy-1", "7"));

  winnow::test::Pipeline p(db);
  BatchReport r = ingest_file(p, write_file(dir.file("m1.jsonl"), lines));
  CHECK(r.counts[SampleStatus::accepted] == 80);
  CHECK(r.counts[SampleStatus::label_issue] == 1);
  CHECK(r.counts[SampleStatus::duplicate_near] == 17);
  const std::int64_t flagged_id = p.store().find_by_external_key("mislabelled")->id;
  for (int c = 0; c < 16; ++c) {
    INFO("copy " << c);
    const auto copy = p.store().find_by_external_key("copy-" + std::to_string(c));
    REQUIRE(copy);
    CHECK(copy->status == SampleStatus::duplicate_near);
    const std::string original = (c % 2 == 0 ? "t" : "s") + std::to_string(c);
    CHECK(copy->duplicate_of == p.store().find_by_external_key(original)->id);
  }
  CHECK(p.store().find_by_external_key("flagged-copy-1")->duplicate_of == flagged_id);

  // A later batch of the same process, then another process.
  const auto copy_batch = [&](winnow::test::Pipeline& pipeline, const std::string& name,
                              unsigned seed) {
    const std::string m =
        write_file(dir.file(name + ".jsonl"),
                   {pixels_line(edited_copy(flagged, -1, 0, 0.9, 3.0, seed), name, "1")});
    CHECK(ingest_file(pipeline, m).counts[SampleStatus::duplicate_near] == 1);
    const auto copy = pipeline.store().find_by_external_key(name);
    REQUIRE(copy);
    CHECK(copy->status == SampleStatus::duplicate_near);
    CHECK(copy->duplicate_of == flagged_id);
  };
  copy_batch(p, "flagged-copy-2", 101);
  winnow::test::Pipeline reopened(db);
  copy_batch(reopened, "flagged-copy-3", 102);
}

TEST_CASE("ingest pipeline: a precomputed embedding is taken instead of the embedder's",
          "[ingest]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  winnow::test::Pipeline p(db);
  auto shirts = of_class("0", 3);
  REQUIRE(shirts.size() == 3);
  const auto entries = [&] {
    std::vector<ManifestEntry> out(2);
    out[0].record = *shirts[0];
    out[0].record->key = "first";
    out[1].record = *shirts[1];
    out[1].record->key = "second";
    return out;
  };
  const auto jobs = [](const std::vector<float>& second_vector) {
    std::vector<bulk::JobRecord> out(2);
    out[1].embedding = second_vector;
    return out;
  };
  // The second image carries the first one's vector: its nearest accepted
  // neighbour is then at cosine 1 (gain 0), which its own vector is not.
  const std::vector<float> first_vector = p.embedder().embed(*shirts[0]);
  const BatchReport r = p.ingest_job_batch("b1", "c1", entries(), jobs(first_vector));
  CHECK(r.counts[SampleStatus::accepted] == 2);  // verified on the pixels: not a duplicate
  const auto second = p.store().find_by_external_key("second");
  REQUIRE(second);
  REQUIRE(second->gain);
  CHECK(*second->gain == Approx(0.0).margin(1e-6));
  CHECK(p.embedder().embed(*shirts[1]) != first_vector);

  // A vector of another length is no embedding of this dataset: the batch fails.
  const std::vector<float> too_long(first_vector.size() + 1, 0.1f);
  std::vector<ManifestEntry> wrong = entries();
  wrong[0].record->key = "third";
  wrong[1].record->key = "fourth";
  CHECK_THROWS_AS(p.ingest_job_batch("b2", "c2", std::move(wrong), jobs(too_long)), winnow::Error);
  CHECK_FALSE(p.store().find_by_external_key("third"));
}

// The next chunk is searched while the one before it is decided, so a copy of
// a record one chunk back is not in its search and must be found among the
// vectors folded in exactly (prepared_chunk.h). Chunks of 4: originals in
// even chunks, their copies in the next chunk, a second copy two chunks on;
// one thread and two decide alike.
TEST_CASE("ingest pipeline: a copy of a record one chunk back is its near duplicate",
          "[ingest][near][threads]") {
  std::vector<std::string> lines;
  const auto text = [](std::uint64_t i, bool edited) {
    const auto digits = [](std::uint64_t x) {
      return std::to_string((x + 1) * 0x9E3779B97F4A7C15ull);
    };
    return digits(3 * i) + " " + digits(3 * i + 1) + " " + digits(3 * i + 2) +
           (edited ? " (copy)" : "");
  };
  constexpr std::uint64_t kGroups = 12;
  std::vector<std::string> copy_keys;
  for (std::uint64_t g = 0; g < kGroups; ++g) {
    for (std::uint64_t j = 0; j < 4; ++j) {
      const std::uint64_t i = 4 * g + j;
      lines.push_back(json{{"key", "o" + std::to_string(i)}, {"text", text(i, false)}}.dump());
    }
    for (std::uint64_t j = 0; j < 4; ++j) {
      const std::uint64_t i = 4 * g + j;
      copy_keys.push_back("c" + std::to_string(i));
      lines.push_back(json{{"key", copy_keys.back()}, {"text", text(i, true)}}.dump());
    }
  }
  std::vector<std::vector<std::string>> statuses;
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    winnow::test::TempDir dir;
    const auto pipeline = text_pipeline(dir, 4);
    winnow::test::Pipeline& p = *pipeline;
    p.set_threads(threads);
    const BatchReport r = ingest_file(p, write_file(dir.file("m.jsonl"), lines));
    CHECK(r.counts[SampleStatus::accepted] == 4 * kGroups);
    CHECK(r.counts[SampleStatus::duplicate_near] == 4 * kGroups);
    std::vector<std::string> seen;
    for (const std::string& key : copy_keys) {
      const auto sample = p.store().find_by_external_key(key);
      REQUIRE(sample);
      seen.push_back(key + " " + std::string(to_string(sample->status)));
    }
    statuses.push_back(seen);
  }
  CHECK(statuses[0] == statuses[1]);
}

// Two batches of 300 texts alike in form, whose embeddings pass the text
// gate: many stored candidates a record. Every fifth record of the second
// batch ("b<i>") is a near copy of the first batch's "a<i>".
struct AlikeTextBatches {
  std::vector<std::string> first, second;
};
AlikeTextBatches alike_text_batches() {
  const auto text_of = [](std::uint64_t i) {
    return fmt::format("the record {} of class {}", (i * 7919) % 1000003, i % 5);
  };
  AlikeTextBatches out;
  for (std::uint64_t i = 0; i < 300; ++i) {
    out.first.push_back(json{{"key", "a" + std::to_string(i)}, {"text", text_of(i)}}.dump());
    const std::string text = i % 5 == 0 ? text_of(i) + " !" : text_of(1000 + i);
    out.second.push_back(json{{"key", "b" + std::to_string(i)}, {"text", text}}.dump());
  }
  return out;
}

// Sketches of the stored texts (StoredTextSketches) rule candidates out
// without reading them, and must change no decision: a process that wrote
// the first batch (sketches of every text it wrote), one reopened before the
// second (sketches loaded from the store), and one reopened from a store
// without stored sketches (as one written before they were kept: sketches
// only of the texts it reads) decide the second batch alike, near copies of
// stored texts included.
TEST_CASE("sketches of stored texts change no decision, in one process or after a reopen",
          "[ingest][sketch]") {
  const AlikeTextBatches batches = alike_text_batches();
  const std::vector<std::string>& first = batches.first;
  const std::vector<std::string>& second = batches.second;
  winnow::test::TempDir one_dir, reopened_dir, unsketched_dir;
  enum class Run { one_process, reopened, reopened_without_stored_sketches };
  const auto run = [&](const winnow::test::TempDir& dir, Run how) {
    CurationConfig config;
    config.embedder = "hashed-ngrams(n=3,dim=1024)";  // wide enough to rank each copy first
    config.micro_batch = 64;
    winnow::test::Pipeline::init(dir.file("text.db"), config);
    auto pipeline = std::make_unique<winnow::test::Pipeline>(dir.file("text.db"));
    const std::string first_path = write_file(dir.file("first.jsonl"), first);
    const std::string second_path = write_file(dir.file("second.jsonl"), second);
    ingest_file(*pipeline, first_path);
    if (how == Run::reopened_without_stored_sketches) {
      pipeline->store().database().exec("DELETE FROM text_sketches");
    }
    if (how != Run::one_process)
      pipeline = std::make_unique<winnow::test::Pipeline>(dir.file("text.db"));
    ingest_file(*pipeline, second_path);
    return pipeline;
  };
  const auto one = run(one_dir, Run::one_process);
  const auto reopened = run(reopened_dir, Run::reopened);
  const auto unsketched = run(unsketched_dir, Run::reopened_without_stored_sketches);

  int near_copies = 0, ruled_out_one = 0, ruled_out_reopened = 0, ruled_out_unsketched = 0;
  for (std::size_t i = 0; i < second.size(); ++i) {
    const std::string key = "b" + std::to_string(i);
    const auto a = one->store().find_by_external_key(key);
    const auto b = reopened->store().find_by_external_key(key);
    const auto c = unsketched->store().find_by_external_key(key);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(c);
    INFO(key);
    CHECK(a->id == b->id);
    CHECK(a->status == b->status);
    CHECK(a->duplicate_of == b->duplicate_of);
    CHECK(a->id == c->id);
    CHECK(a->status == c->status);
    CHECK(a->duplicate_of == c->duplicate_of);
    if (i % 5 == 0) {  // a copy of "a<i>", or of the sample "a<i>" duplicates
      const auto original = one->store().find_by_external_key("a" + std::to_string(i));
      CHECK(a->status == SampleStatus::duplicate_near);
      CHECK(a->duplicate_of == original->duplicate_of.value_or(original->id));
      near_copies += a->status == SampleStatus::duplicate_near ? 1 : 0;
    }
    const auto ruled_out = [](winnow::test::Pipeline& p, std::int64_t id) {
      const auto events = p.store().events_of(id);
      REQUIRE(events.size() == 1);
      const json details = json::parse(events[0].details_json);
      return details.contains("near_duplicate")
                 ? details["near_duplicate"]["candidates_ruled_out"].get<int>()
                 : 0;
    };
    ruled_out_one += ruled_out(*one, a->id);
    ruled_out_reopened += ruled_out(*reopened, b->id);
    ruled_out_unsketched += ruled_out(*unsketched, c->id);
  }
  CHECK(near_copies == 60);
  // Most candidates were ruled out unread: as many by the reopened process,
  // which loaded every sketch the first one stored; fewer without stored
  // sketches, where a process sketches a stored text once it has read it.
  CHECK(ruled_out_one > 1000);
  CHECK(ruled_out_reopened == ruled_out_one);
  CHECK(ruled_out_unsketched < ruled_out_one);

  // Every judged text has its stored sketch; without stored sketches, those
  // of the second batch and of the stored texts it read.
  const auto count = [](winnow::test::Pipeline& p, const char* sql) {
    winnow::store::Statement query(p.store().database(), sql);
    REQUIRE(query.step());
    return query.column_int64(0);
  };
  const char* judged = "SELECT count(*) FROM curation_vectors";
  // Each row: whole sketches of 28 bytes, then an 8-byte checksum.
  const char* sketched = "SELECT coalesce(sum((length(sketches) - 8) / 28), 0) FROM text_sketches";
  const std::int64_t second_ids = one->store().find_by_external_key("b0")->id;
  CHECK(count(*one, sketched) == count(*one, judged));
  CHECK(count(*reopened, sketched) == count(*reopened, judged));
  const std::int64_t second_judged =
      count(*unsketched,
            fmt::format("SELECT count(*) FROM curation_vectors WHERE sample_id >= {}", second_ids)
                .c_str());
  CHECK(count(*unsketched, sketched) > second_judged);
  CHECK(count(*unsketched, sketched) < count(*unsketched, judged));
}

// The stored sketches are read whole when a store opens; a damaged row (one
// naming a sample id past the store's, which the reader would size its table
// by) is refused with an error naming it, and the store opens again once the
// rows are deleted (they only spare reading texts).
TEST_CASE("a damaged text_sketches row is refused by name, and deleting the rows recovers",
          "[ingest][sketch][hardening]") {
  const AlikeTextBatches batches = alike_text_batches();
  winnow::test::TempDir dir;
  const std::string db = dir.file("text.db");
  {
    const auto pipeline = text_pipeline(dir, 64);
    ingest_file(*pipeline, write_file(dir.file("first.jsonl"), batches.first));
    // Sample 10^12, little-endian, a size and no bits: 28 bytes.
    pipeline->store().database().exec(
        "INSERT INTO text_sketches (shingle, sketches) VALUES (5, "
        "x'0010A5D4E80000000000000000000000000000000000000000000000')");
  }
  CHECK_THROWS_WITH(winnow::test::Pipeline(db), Catch::Contains(db) &&
                                                    Catch::Contains("text_sketches") &&
                                                    Catch::Contains("1000000000000"));
  {
    winnow::store::MetadataStore store(db);
    store.database().exec("DELETE FROM text_sketches");
  }
  winnow::test::Pipeline reopened(db);
  const BatchReport second =
      ingest_file(reopened, write_file(dir.file("second.jsonl"), batches.second));
  CHECK(second.counts[SampleStatus::duplicate_near] >= 60);  // the copies, read and verified
}

// A process reopened before the second batch starts with the sketches the
// store kept, and sketches any other stored text once it has read it; a
// sketch rules later candidates out unread. Two threads
// must read what one thread reads, so that the events (candidates checked and
// ruled out, the best similarity below the threshold) are the same, not only
// the statuses.
TEST_CASE("one thread and two record the same events after a reopen, sketches included",
          "[ingest][sketch][threads]") {
  const AlikeTextBatches batches = alike_text_batches();
  const std::vector<std::string>& first = batches.first;
  const std::vector<std::string>& second = batches.second;
  // With the sketches the store kept, or without (a store from before they
  // were kept: the reopened process sketches texts only as it reads them).
  const bool stored_sketches = GENERATE(true, false);
  INFO("stored sketches: " << stored_sketches);
  std::vector<std::vector<std::string>> events_by_threads;
  int ruled_out = 0;
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    winnow::test::TempDir dir;
    CurationConfig config;
    config.embedder = "hashed-ngrams(n=3,dim=1024)";
    config.micro_batch = 64;
    winnow::test::Pipeline::init(dir.file("text.db"), config);
    auto pipeline = std::make_unique<winnow::test::Pipeline>(dir.file("text.db"));
    pipeline->set_threads(threads);
    ingest_file(*pipeline, write_file(dir.file("first.jsonl"), first));
    if (!stored_sketches) pipeline->store().database().exec("DELETE FROM text_sketches");
    pipeline = std::make_unique<winnow::test::Pipeline>(dir.file("text.db"));
    pipeline->set_threads(threads);
    ingest_file(*pipeline, write_file(dir.file("second.jsonl"), second));
    std::vector<std::string> events;
    for (std::size_t i = 0; i < second.size(); ++i) {
      const auto sample = pipeline->store().find_by_external_key("b" + std::to_string(i));
      REQUIRE(sample);
      const auto recorded = pipeline->store().events_of(sample->id);
      REQUIRE(recorded.size() == 1);
      events.push_back(std::string(to_string(sample->status)) + " " + recorded[0].details_json);
      const json details = json::parse(recorded[0].details_json);
      if (threads == 1 && details.contains("near_duplicate")) {
        ruled_out += details["near_duplicate"]["candidates_ruled_out"].get<int>();
      }
    }
    events_by_threads.push_back(events);
  }
  CHECK(ruled_out > 100);  // sketches were in play
  REQUIRE(events_by_threads[0].size() == events_by_threads[1].size());
  for (std::size_t i = 0; i < events_by_threads[0].size(); ++i) {
    INFO("b" << i);
    CHECK(events_by_threads[0][i] == events_by_threads[1][i]);
  }
}

// Once the index asks for many queries per search call (an IVF index past
// sharedScanFrom vectors), micro-batches are searched in blocks of up to 8,
// and each folds in exactly what was written since its block's search: the
// block before and its own block's earlier micro-batches (prepared_chunk.h).
// At this size an IVF index scans every cell, so its search is exact and
// blocks of 8 (sharedScanFrom=1) must decide as blocks of one (the default
// below 2^17 vectors), on one thread or two. Near copies sit 1 to 12
// micro-batches after their originals: in the same block, the block before,
// or further back; every tenth label is flipped.
TEST_CASE("ingest pipeline: search blocks of several micro-batches decide as blocks of one",
          "[ingest][near][threads]") {
  constexpr std::size_t kOriginals = 640, kChunk = 16;
  const auto& images = fashion_test();
  REQUIRE(images.size() >= kOriginals);
  std::vector<std::vector<std::string>> after(kOriginals);
  std::vector<std::string> lines, copy_keys;
  for (std::size_t j = 0; j < kOriginals; ++j) {
    const ManifestRecord& r = images[j];
    if (j % 10 != 3) continue;
    const std::size_t at = std::min(kOriginals - 1, j + kChunk * (1 + (j / 10) % 12));
    copy_keys.push_back("copy" + std::to_string(j));
    after[at].push_back(
        pixels_line(edited_copy(r, j % 3 == 0 ? 1 : 0, j % 2 == 0 ? -1 : 0,
                                0.95 + 0.001 * static_cast<double>(j % 100),
                                2.0 + static_cast<double>(j % 4), static_cast<unsigned>(j)),
                    copy_keys.back(), r.label.value()));
  }
  for (std::size_t j = 0; j < kOriginals; ++j) {
    std::string label = images[j].label.value();
    if (j % 10 == 7) label = std::to_string((std::stoi(label) + 1) % 10);
    lines.push_back(pixels_line(images[j], "o" + std::to_string(j), label));
    for (const std::string& copy : after[j]) lines.push_back(copy);
  }
  const std::vector<std::string> first(lines.begin(), lines.begin() + 400);
  const std::vector<std::string> second(lines.begin() + 400, lines.end());

  const auto run = [&](const std::string& index, int threads) {
    winnow::test::TempDir dir;
    CurationConfig config;
    config.index = index;
    config.micro_batch = static_cast<int>(kChunk);
    winnow::test::Pipeline::init(dir.file("data.db"), config);
    winnow::test::Pipeline p(dir.file("data.db"));
    p.set_threads(threads);
    ingest_file(p, write_file(dir.file("first.jsonl"), first));
    ingest_file(p, write_file(dir.file("second.jsonl"), second));
    std::vector<std::string> decided;
    for (const std::string& line : lines) {
      const std::string key = json::parse(line)["key"].get<std::string>();
      const auto sample = p.store().find_by_external_key(key);
      REQUIRE(sample);
      decided.push_back(fmt::format("{} {} {}", key, to_string(sample->status),
                                    sample->duplicate_of.value_or(0)));
    }
    return decided;
  };
  const auto one_chunk_blocks = run("ivf", 1);
  const auto blocks = run("ivf(sharedScanFrom=1)", 1);
  const auto blocks_two_threads = run("ivf(sharedScanFrom=1)", 2);
  CHECK(blocks == one_chunk_blocks);
  CHECK(blocks_two_threads == blocks);

  int near_copies = 0, label_issues = 0;
  for (const std::string& d : blocks) {
    near_copies += d.rfind("copy", 0) == 0 && d.find(" duplicate_near ") != std::string::npos;
    label_issues += d.find(" label_issue ") != std::string::npos;
  }
  CHECK(near_copies == static_cast<int>(copy_keys.size()));
  CHECK(label_issues > 0);
}

// The default index is exact (flat) until switchAt vectors and an IVF after,
// and the switch comes inside a batch, between two micro-batches' additions.
// Decisions and events are the same on one thread and two across it (the
// flat part is searched in one call, the IVF split over the threads); the
// near copies before and after it are all found.
TEST_CASE(
    "an auto index switching to IVF inside a batch records the same events on one thread "
    "and two",
    "[ingest][near][threads]") {
  constexpr std::size_t kImages = 700;
  const auto& images = fashion_test();
  REQUIRE(images.size() >= kImages);
  std::vector<std::string> lines, copy_keys;
  for (std::size_t j = 0; j < kImages; ++j) {
    std::string label = images[j].label.value();
    if (j % 10 == 7) label = std::to_string((std::stoi(label) + 1) % 10);
    lines.push_back(pixels_line(images[j], "o" + std::to_string(j), label));
    if (j % 10 == 3 && j >= 20) {  // a near copy of an image 20 back
      const ManifestRecord& r = images[j - 20];
      copy_keys.push_back("copy" + std::to_string(j - 20));
      lines.push_back(pixels_line(edited_copy(r, 1, 0, 0.97, 3.0, static_cast<unsigned>(j)),
                                  copy_keys.back(), r.label.value()));
    }
  }
  std::vector<std::vector<std::string>> events_by_threads;
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    winnow::test::TempDir dir;
    CurationConfig config;
    config.index = "auto(switchAt=300,sharedScanFrom=1)";
    config.micro_batch = 16;
    winnow::test::Pipeline::init(dir.file("data.db"), config);
    winnow::test::Pipeline p(dir.file("data.db"));
    p.set_threads(threads);
    CHECK(p.index_info().type == "flat");
    ingest_file(p, write_file(dir.file("m.jsonl"), lines));
    CHECK(p.index_info().type == "ivf");
    CHECK(p.index_info().config ==
          "auto(switchAt=300,nprobe=16,cellScale=100,cellCap=256,sharedScanFrom=1)");
    std::vector<std::string> events;
    int near_copies = 0;
    for (const std::string& line : lines) {
      const std::string key = json::parse(line)["key"].get<std::string>();
      const auto sample = p.store().find_by_external_key(key);
      REQUIRE(sample);
      const auto recorded = p.store().events_of(sample->id);
      REQUIRE_FALSE(recorded.empty());
      events.push_back(key + " " + std::string(to_string(sample->status)) + " " +
                       recorded[0].details_json);
      near_copies += key.rfind("copy", 0) == 0 && sample->status == SampleStatus::duplicate_near;
    }
    CHECK(near_copies == static_cast<int>(copy_keys.size()));
    events_by_threads.push_back(events);
  }
  REQUIRE(events_by_threads[0].size() == events_by_threads[1].size());
  for (std::size_t i = 0; i < events_by_threads[0].size(); ++i) {
    CHECK(events_by_threads[0][i] == events_by_threads[1][i]);
  }
}
