#include <catch2/catch.hpp>

#include <sstream>

#include "curation_test_helpers.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/ingest/manifest_reader.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::ingest;
using namespace winnow::curation::test;

namespace {

Rejection rejected(const std::string& line, const ManifestReaderOptions& options = {}) {
  const ManifestEntry e = parse_manifest_line(line, 7, options);
  REQUIRE_FALSE(e.ok());
  REQUIRE(e.rejection.has_value());
  CHECK(e.rejection->line == 7);
  return *e.rejection;
}

ManifestRecord accepted(const std::string& line, const ManifestReaderOptions& options = {}) {
  const ManifestEntry e = parse_manifest_line(line, 3, options);
  if (!e.ok()) {
    FAIL("rejected: " << e.rejection->reason);
  }
  return *e.record;
}

}  // namespace

TEST_CASE("a full text record is parsed", "[manifest]") {
  const ManifestRecord r = accepted(
      R"({"key":"a1","text":"hello world","label":3,"source":"web",)"
      R"("annotations":[{"annotator":"ann1","label":"cat"},{"annotator":"ann2","label":4}],)"
      R"("embedding":[0.5,-1,2e-3],"extra":"ignored"})");
  CHECK(r.key == "a1");
  CHECK(r.line == 3);
  CHECK(r.kind == ContentKind::text);
  CHECK(r.text == "hello world");
  REQUIRE(r.label.has_value());
  CHECK(*r.label == "3");
  CHECK(r.source == "web");
  REQUIRE(r.annotations.size() == 2);
  CHECK(r.annotations[1].annotator == "ann2");
  CHECK(r.annotations[1].label == "4");
  REQUIRE(r.embedding.size() == 3);
  CHECK(r.embedding[1] == -1.0f);
  CHECK(r.content_hash == content_hash(ContentKind::text, "hello world", 11));
  CHECK(r.content_hash.size() == 32);
}

TEST_CASE("pixels and path records are parsed and hashed", "[manifest]") {
  const ManifestRecord p = accepted(R"({"key":"p","pixels":[0,1,2,255],"width":2,"height":2})");
  CHECK(p.kind == ContentKind::pixels);
  CHECK(p.pixels == std::vector<std::uint8_t>{0, 1, 2, 255});
  CHECK(p.width == 2);
  const std::uint8_t bytes[] = {0, 1, 2, 255};
  CHECK(p.content_hash == content_hash(ContentKind::pixels, bytes, 4));
  // Same bytes as text hash differently (the seed is the content kind).
  CHECK(p.content_hash != content_hash(ContentKind::text, bytes, 4));

  ScratchDir dir;
  const std::string file = dir.write("sample.bin", "some bytes");
  ManifestReaderOptions opt;
  opt.base_dir = dir.file("");
  const ManifestRecord f = accepted(R"({"key":"f","path":"sample.bin"})", opt);
  CHECK(f.kind == ContentKind::path);
  CHECK(f.path == "sample.bin");
  CHECK(f.content_hash == file_content_hash(file));
}

TEST_CASE("every rejection reason is reported with the key when known", "[manifest]") {
  CHECK_THAT(rejected("{not json").reason, Catch::Contains("invalid JSON"));
  CHECK_THAT(rejected("[1,2]").reason, Catch::Contains("not an object"));
  CHECK_THAT(rejected(R"({"text":"x"})").reason, Catch::Contains("missing field 'key'"));
  CHECK_THAT(rejected(R"({"key":5,"text":"x"})").reason, Catch::Contains("'key' must be a string"));
  CHECK_THAT(rejected(R"({"key":"","text":"x"})").reason, Catch::Contains("'key' is empty"));
  const Rejection none = rejected(R"({"key":"k1"})");
  CHECK(none.key == "k1");
  CHECK_THAT(none.reason, Catch::Contains("no content"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","pixels":[1]})").reason,
             Catch::Contains("several content fields"));
  CHECK_THAT(rejected(R"({"key":"k","text":7})").reason,
             Catch::Contains("'text' must be a string"));
  CHECK_THAT(rejected(R"({"key":"k","text":""})").reason, Catch::Contains("'text' is empty"));
  CHECK_THAT(rejected(R"({"key":"k","path":3})").reason,
             Catch::Contains("'path' must be a string"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":"abc"})").reason,
             Catch::Contains("'pixels' must be an array"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[]})").reason, Catch::Contains("'pixels' is empty"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,256]})").reason, Catch::Contains("pixels[1]"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,-1]})").reason, Catch::Contains("pixels[1]"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,2.5]})").reason, Catch::Contains("pixels[1]"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,2,3],"width":2,"height":2})").reason,
             Catch::Contains("does not match 3 pixels"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,2],"width":2})").reason,
             Catch::Contains("together"));
  CHECK_THAT(rejected(R"({"key":"k","pixels":[1,2],"width":0,"height":2})").reason,
             Catch::Contains("positive integer"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","label":[1]})").reason, Catch::Contains("'label'"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","source":1})").reason, Catch::Contains("'source'"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","annotations":{}})").reason,
             Catch::Contains("'annotations' must be an array"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","annotations":[{"label":1}]})").reason,
             Catch::Contains("annotations[0].annotator"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","annotations":[{"annotator":"a"}]})").reason,
             Catch::Contains("annotations[0].label"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","embedding":"v"})").reason,
             Catch::Contains("'embedding' must be an array"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","embedding":[]})").reason,
             Catch::Contains("'embedding' is empty"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","embedding":[1,"a"]})").reason,
             Catch::Contains("embedding[1] must be a number"));
  CHECK_THAT(rejected(R"({"key":"k","text":"x","embedding":[1,1e39]})").reason,
             Catch::Contains("embedding[1] is not finite"));
  ManifestReaderOptions dim3;
  dim3.expected_embedding_dim = 3;
  CHECK_THAT(rejected(R"({"key":"k","text":"x","embedding":[1,2]})", dim3).reason,
             Catch::Contains("has 2 values, expected 3"));
  const Rejection missing = rejected(R"({"key":"k","path":"/nonexistent/winnow/file.png"})");
  CHECK(missing.key == "k");
  CHECK_THAT(missing.reason, Catch::Contains("/nonexistent/winnow/file.png"));
  CHECK_THAT(rejected(std::string(100, '[') + std::string(100, ']')).reason,
             Catch::Contains("nested deeper"));
}

TEST_CASE("a batch with bad lines still yields every good record", "[manifest]") {
  std::istringstream in(
      "{\"key\":\"a\",\"text\":\"one\"}\n"
      "garbage\n"
      "\n"
      "{\"key\":\"b\",\"pixels\":[1,2,3,4]}\r\n"
      "{\"key\":\"c\"}\n"
      "{\"key\":\"d\",\"text\":\"last, no newline\"}");
  ManifestReader reader(in, "batch");
  std::vector<std::string> good;
  std::vector<std::size_t> bad_lines;
  ManifestEntry e;
  while (reader.next(e)) {
    if (e.ok()) {
      good.push_back(e.record->key);
    } else {
      bad_lines.push_back(e.rejection->line);
    }
  }
  CHECK(good == std::vector<std::string>{"a", "b", "d"});
  CHECK(bad_lines == std::vector<std::size_t>{2, 5});
  CHECK(reader.lines_read() == 6);
}

TEST_CASE("a line over the limit is rejected without being stored", "[manifest]") {
  ManifestReaderOptions opt;
  opt.max_line_bytes = 1024;
  std::string big = "{\"key\":\"huge\",\"text\":\"" + std::string(5u << 20, 'x') + "\"}";
  std::istringstream in("{\"key\":\"a\",\"text\":\"ok\"}\n" + big +
                        "\n{\"key\":\"b\",\"text\":\"ok\"}\n");
  ManifestReader reader(in, "big", opt);
  ManifestEntry e;
  REQUIRE(reader.next(e));
  CHECK(e.ok());
  REQUIRE(reader.next(e));
  REQUIRE_FALSE(e.ok());
  CHECK(e.rejection->line == 2);
  CHECK_THAT(e.rejection->reason, Catch::Contains("longer than the limit of 1024 bytes"));
  REQUIRE(reader.next(e));
  CHECK(e.ok());
  CHECK(e.record->key == "b");
  CHECK_FALSE(reader.next(e));
}

TEST_CASE("manifest files resolve relative paths against their directory", "[manifest]") {
  ScratchDir dir;
  dir.write("img.raw", "abc");
  const std::string manifest = dir.write("m.jsonl", "{\"key\":\"x\",\"path\":\"img.raw\"}\n");
  ManifestReader reader(manifest);
  ManifestEntry e;
  REQUIRE(reader.next(e));
  REQUIRE(e.ok());
  CHECK(e.record->resolved_path == dir.file("img.raw"));
  CHECK_THROWS_AS(ManifestReader(dir.file("missing.jsonl")), winnow::Error);
}
