// Malformed manifests through the whole ingest pipeline (real SQLite file in a
// temporary directory): every bad record becomes a `rejected` sample whose
// reason names the problem, every good record of the same manifest is
// accepted, an earlier batch is left as it was, and a manifest that cannot be
// read at all is a winnow::Error that leaves the store untouched.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/error.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;

// A text record with a 4-value embedding (the dataset uses `provided(dim=4)`).
std::string text_record(const std::string& key, const std::string& text,
                        const std::vector<float>& embedding) {
  return json{{"key", key}, {"text", text}, {"embedding", embedding}}.dump();
}

// One manifest line and, for a bad one, a fragment its reason must contain.
struct Line {
  std::string text;
  std::string reason;  // empty: a good record, to be accepted
};

std::string write_lines(const std::string& path, const std::vector<Line>& lines) {
  std::ofstream f(path, std::ios::binary);
  for (const Line& l : lines) f << l.text << "\n";
  return path;
}

std::vector<std::string> keys_of(winnow::test::Pipeline& p, SampleStatus status) {
  std::vector<std::string> keys;
  p.store().for_each_sample([&](const SampleRecord& s) { keys.push_back(s.external_key); }, status);
  return keys;
}

// The dataset every test starts from: one batch of four accepted samples.
struct MalformedFixture {
  winnow::test::TempDir dir;
  std::string db = dir.file("data.db");
  std::vector<std::string> first_keys;

  MalformedFixture() {
    CurationConfig config;
    config.embedder = "provided(dim=4)";
    winnow::test::Pipeline::init(db, config);
    const std::string m =
        write_lines(dir.file("first.jsonl"), {{text_record("first-0", "zero", {1, 0, 0, 0}), ""},
                                              {text_record("first-1", "one", {0, 1, 0, 0}), ""},
                                              {text_record("first-2", "two", {0, 0, 1, 0}), ""},
                                              {text_record("first-3", "three", {0, 0, 0, 1}), ""}});
    winnow::test::Pipeline p(db);
    const BatchReport r = p.ingest_batch(m, file_checksum(m), read_manifest(m));
    REQUIRE(r.counts[SampleStatus::accepted] == 4);
    first_keys = keys_of(p, SampleStatus::accepted);
  }
};

}  // namespace

TEST_CASE("malformed records are rejected with a reason, good ones and earlier batches are kept",
          "[malformed]") {
  MalformedFixture data;
  const winnow::test::TempDir& dir = data.dir;

  // Paths that cannot be read as a file even by root: a directory and a
  // symbolic link to nothing.
  std::filesystem::create_directory(dir.file("a-directory"));
  std::filesystem::create_symlink(dir.file("nowhere"), dir.file("dangling"));
  { std::ofstream(dir.file("real.bin")) << "real file bytes"; }

  ManifestReaderOptions options;
  options.max_line_bytes = 64 * 1024;  // a small limit keeps the huge line cheap
  const std::string huge_line =
      json{{"key", "huge"}, {"text", std::string(100 * 1024, 'a')}}.dump();

  const std::vector<Line> lines = {
      {text_record("good-a", "alpha", {1, -1, 0, 0}), ""},
      {R"({"key":"bad-json","text":"x")", "invalid JSON"},
      {R"({"text":"no key","embedding":[1,0,1,0]})", "missing field 'key'"},
      {R"({"key":"no-content","embedding":[1,0,1,0]})", "no content"},
      {R"({"key":"two-contents","text":"a","pixels":[1,2],"embedding":[1,0,1,0]})",
       "several content fields"},
      {text_record("short-vector", "beta", {1, 2, 3}), "has an embedding of 3 values, expected 4"},
      {R"({"key":"nan","text":"t","embedding":[NaN,0,0,1]})",
       "invalid literal; last read: '\"embedding\":[N' (JSON has no NaN or Infinity)"},
      {R"({"key":"minus-inf","text":"t","embedding":[-Infinity,0,0,1]})",
       "(JSON has no NaN or Infinity)"},
      {R"({"key":"overflow","text":"t","embedding":[1e999,0,0,1]})",
       "invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'"},
      {R"({"key":"float-overflow","text":"t","embedding":[0,1e39,0,1]})",
       "embedding[1] is not finite as a 32-bit float"},
      {R"({"key":"nan-pixels","pixels":[1,NaN,3,4]})", "(JSON has no NaN or Infinity)"},
      {R"({"key":"huge-pixels","pixels":[1,-1e999,3,4],"embedding":[1,0,1,0]})",
       "number overflow parsing '-1e999'"},
      {R"({"key":"float-pixels","pixels":[1,2.5,3,4],"embedding":[1,0,1,0]})",
       "pixels[1] must be an integer 0-255, got 2.5"},
      {text_record("good-b", "gamma", {0, 1, -1, 0}), ""},
      {json{{"key", "dir-path"}, {"path", dir.file("a-directory")}, {"embedding", {1, 0, 1, 0}}}
           .dump(),
       "is a directory, not a regular file"},
      {json{{"key", "dangling-path"}, {"path", dir.file("dangling")}, {"embedding", {1, 0, 1, 0}}}
           .dump(),
       "is a symbolic link; links are not followed"},
      {huge_line, "longer than the limit of 65536 bytes"},
      {"{\"key\":\"bad-utf8\",\"text\":\"ab\xff\xfe cd\",\"embedding\":[1,0,1,0]}", "UTF-8"},
      {"{\"key\":\"bad-utf8-key-\xc3\",\"text\":\"x\",\"embedding\":[1,0,1,0]}", "UTF-8"},
      {R"({"key":"object-label","text":"delta","embedding":[1,1,1,0],"label":{"name":"cat"}})",
       "field 'label' must be a string or an integer, got object"},
      {text_record("good-c", "epsilon", {0, 0, 1, -1}), ""},
      {json{{"key", "good-path"}, {"path", dir.file("real.bin")}, {"embedding", {-1, 0, 0, 1}}}
           .dump(),
       ""},
  };
  const std::string manifest = write_lines(dir.file("mixed.jsonl"), lines);

  winnow::test::Pipeline p(data.db);
  const BatchReport report =
      p.ingest_batch(manifest, file_checksum(manifest), read_manifest(manifest, options));

  std::size_t good = 0;
  for (const Line& l : lines) good += l.reason.empty() ? 1 : 0;
  const std::size_t bad = lines.size() - good;
  CHECK(report.counts[SampleStatus::accepted] == static_cast<std::int64_t>(good));
  CHECK(report.counts[SampleStatus::rejected] == static_cast<std::int64_t>(bad));
  CHECK(report.counts.total() == static_cast<std::int64_t>(lines.size()));

  // Each bad line's rejection names its problem (events carry the line).
  std::map<std::size_t, std::string> reason_of_line;
  for (const EventRecord& e : p.store().events_of_batch(report.batch_id)) {
    if (e.decision != SampleStatus::rejected) continue;
    reason_of_line[json::parse(e.details_json).at("line").get<std::size_t>()] = e.reason;
  }
  CHECK(reason_of_line.size() == bad);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].reason.empty()) continue;
    INFO("line " << i + 1 << ": " << lines[i].text.substr(0, 80));
    REQUIRE(reason_of_line.count(i + 1) == 1);
    const std::string& reason = reason_of_line[i + 1];
    CHECK_THAT(reason, Catch::Contains(lines[i].reason));
    // Reasons are stored and exported as JSON: valid UTF-8, and short (the
    // 100 KiB line is not copied into its reason).
    CHECK_NOTHROW(json(reason).dump());
    CHECK(reason.size() < 400);
  }

  // Every good record is in; the first batch is exactly as it was.
  std::vector<std::string> accepted = keys_of(p, SampleStatus::accepted);
  std::vector<std::string> expected = data.first_keys;
  expected.insert(expected.end(), {"good-a", "good-b", "good-c", "good-path"});
  CHECK(accepted == expected);
  CHECK(p.store().count_by_status().total() ==
        static_cast<std::int64_t>(data.first_keys.size() + lines.size()));
  CHECK(p.index_info().vectors == data.first_keys.size() + good);
}

TEST_CASE("a manifest that is not readable text is an error and changes nothing", "[malformed]") {
  MalformedFixture data;
  const winnow::test::TempDir& dir = data.dir;
  std::filesystem::create_directory(dir.file("manifest-dir.jsonl"));
  std::string garbage = "\x89PNG\r\n\x1a\n";  // the start of an image, NUL bytes follow
  garbage += std::string("\0\0\0\rIHDR\0\0\0\x1c", 12);
  for (int i = 0; i < 2048; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
  { std::ofstream(dir.file("garbage.jsonl"), std::ios::binary) << garbage; }

  winnow::test::Pipeline p(data.db);
  const StatusCounts before = p.store().count_by_status();
  const std::size_t batches_before = p.store().all_batches().size();

  struct Case {
    std::string path;
    std::string message;
  };
  for (const Case& c :
       {Case{dir.file("manifest-dir.jsonl"), "is a directory, not a regular file"},
        Case{dir.file("garbage.jsonl"), "not JSON Lines text: NUL byte at offset 8"},
        Case{dir.file("missing.jsonl"), "does not exist"}}) {
    INFO(c.path);
    // The message names the manifest and the problem.
    CHECK_THROWS_WITH(read_manifest(c.path), Catch::Contains(c.path) && Catch::Contains(c.message));
  }
  CHECK(p.store().count_by_status().by_status == before.by_status);
  CHECK(p.store().all_batches().size() == batches_before);
  CHECK(keys_of(p, SampleStatus::accepted) == data.first_keys);
}

TEST_CASE("a user key in the shape of a rejected record's key is refused and fails nothing",
          "[malformed][keys]") {
  MalformedFixture data;
  const winnow::test::TempDir& dir = data.dir;
  winnow::test::Pipeline p(data.db);
  // Batch 2 plants the key batch 3's bad first line would get.
  const std::string planted = write_lines(
      dir.file("planted.jsonl"), {{text_record("#rejected-b3-l1", "planted", {1, 1, 0, 0}), ""},
                                  {text_record("x#rejected-b9", "planted too", {1, 0, 1, 0}), ""}});
  const BatchReport r2 = p.ingest_batch(planted, file_checksum(planted), read_manifest(planted));
  CHECK(r2.counts[SampleStatus::rejected] == 2);
  REQUIRE(r2.rejections.size() == 1);
  CHECK_THAT(r2.rejections[0].reason,
             Catch::Contains("which winnow keeps for the keys it gives rejected records"));
  CHECK_FALSE(p.store().find_by_external_key("#rejected-b3-l1"));

  // Batch 3: a bad first line, then good records: the bad line is rejected
  // under its own key and the good ones are accepted.
  const std::string victim = write_lines(dir.file("victim.jsonl"),
                                         {{"{not json", ""},
                                          {text_record("victim-0", "good one", {0, 1, 1, 0}), ""},
                                          {text_record("victim-1", "good two", {0, 0, 1, 1}), ""}});
  const BatchReport r3 = p.ingest_batch(victim, file_checksum(victim), read_manifest(victim));
  CHECK(r3.batch_id == 3);
  CHECK(r3.counts[SampleStatus::accepted] == 2);
  CHECK(r3.counts[SampleStatus::rejected] == 1);
  CHECK(p.store().find_by_external_key("#rejected-b3-l1"));

  // A key of that shape stored before the rule (written here by hand) makes
  // the next made key take a counter instead of failing the batch.
  p.store().database().exec(
      "UPDATE samples SET external_key = '#rejected-b4-l1' WHERE external_key = 'first-0'");
  winnow::test::Pipeline reopened(data.db);
  const std::string later =
      write_lines(dir.file("later.jsonl"),
                  {{"{not json either", ""}, {text_record("later-0", "good", {1, 0, 0, 1}), ""}});
  const BatchReport r4 = reopened.ingest_batch(later, file_checksum(later), read_manifest(later));
  CHECK(r4.batch_id == 4);
  CHECK(r4.counts[SampleStatus::accepted] == 1);
  CHECK(reopened.store().find_by_external_key("#rejected-b4-l1-2"));
}
