#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "support/curation_test_helpers.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::readers;
using namespace winnow::curation::test;

namespace {

// A double as a JSON number with up to 9 significant digits.
std::string fmt_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

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

// The reader takes a provided embedding's numbers apart from the general JSON
// parser (split_embedding_field). A top-level key written with an escape is
// left to the general parser, so the same record with the key spelled
// "embed\u0064ing" (and a field before it 5 bytes shorter, so that every
// byte after it is at the same offset) is the reference: the same floats, bit
// for bit, or the same refusal, word for word (but for the key's spelling).
TEST_CASE("a provided embedding reads the same as through the general JSON parser", "[manifest]") {
  std::mt19937 rng(20261128);
  const std::vector<std::string> fixed = {"0",
                                          "-0",
                                          "0.0",
                                          "-0.0",
                                          "7",
                                          "-123456789012",
                                          "1e-5",
                                          "2.5E+10",
                                          "-3e0",
                                          "0.1",
                                          "1e-40",
                                          "3.4028234e38",
                                          "3.5e38",
                                          "-3.5e38",
                                          "1e-320",
                                          "1e400",
                                          "01",
                                          "1.",
                                          ".5",
                                          "+1",
                                          "NaN",
                                          "Infinity",
                                          "1e",
                                          "-",
                                          "true",
                                          "\"2\"",
                                          "[2]",
                                          "null",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "-9223372036854775809",
                                          "123456789012345678901234567890",
                                          "0.30000000000000004",
                                          "1.00000005960464477539062"};
  std::uniform_int_distribution<int> pick(0, static_cast<int>(fixed.size()) - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> digits(1, 17);
  std::uniform_int_distribution<int> exponent(-45, 40);
  const std::vector<std::string> spaces = {"", " ", "  ", "\t", "\r"};
  std::uniform_int_distribution<int> space(0, static_cast<int>(spaces.size()) - 1);
  auto number = [&]() -> std::string {
    const int k = kind(rng);
    if (k == 0) return fixed[static_cast<std::size_t>(pick(rng))];
    char buf[64];
    if (k <= 3) {
      std::snprintf(buf, sizeof buf, "%.*e", digits(rng),
                    normal(rng) * std::pow(10.0, exponent(rng)));
    } else if (k <= 5) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(normal(rng) * 1e6));
    } else {
      std::snprintf(buf, sizeof buf, "%.*f", digits(rng), normal(rng));
    }
    return buf;
  };
  int fast_accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = 1 + trial % 9;
    std::string array = "[" + spaces[static_cast<std::size_t>(space(rng))];
    for (int i = 0; i < n; ++i) {
      if (i > 0)
        array += spaces[static_cast<std::size_t>(space(rng))] + "," +
                 spaces[static_cast<std::size_t>(space(rng))];
      // Mostly plain numbers, so that most records are accepted.
      array += trial % 4 == 0 ? number() : fmt_number(normal(rng));
    }
    array += spaces[static_cast<std::size_t>(space(rng))] + "]";
    if (trial % 50 == 0) array = "[]";
    const std::string tail = R"(,"key":"k1","text":"some text","label":2})";
    const std::string fast = R"({"p":"12345","embedding":)" + array + tail;
    const std::string reference = R"({"p":"","embed\u0064ing":)" + array + tail;
    ManifestReaderOptions options;
    if (trial % 7 == 0) options.expected_embedding_dim = 4;
    const ManifestEntry got = parse_manifest_line(fast, 5, options);
    const ManifestEntry want = parse_manifest_line(reference, 5, options);
    INFO("array " << array);
    REQUIRE(got.ok() == want.ok());
    if (!want.ok()) {
      // nlohmann's message quotes what it read last, the key among it.
      std::string reason = want.rejection->reason;
      if (const auto at = reason.find(R"(embed\u0064ing)"); at != std::string::npos) {
        reason.replace(at, 14, "embedding");
      }
      CHECK(got.rejection->reason == reason);
      continue;
    }
    ++fast_accepted;
    REQUIRE(got.record->embedding.size() == want.record->embedding.size());
    CHECK(std::memcmp(got.record->embedding.data(), want.record->embedding.data(),
                      want.record->embedding.size() * sizeof(float)) == 0);
    CHECK(got.record->key == want.record->key);
    CHECK(got.record->text == want.record->text);
    CHECK(got.record->label == want.record->label);
  }
  CHECK(fast_accepted > 1500);
}

TEST_CASE("an embedding key written twice or nested is left to the general parser", "[manifest]") {
  // nlohmann keeps the last of two equal keys.
  const ManifestRecord twice =
      accepted(R"({"key":"a","text":"t","embedding":[1,2],"embedding":[3]})");
  CHECK(twice.embedding == std::vector<float>{3.0f});
  const ManifestRecord nested =
      accepted(R"({"key":"a","text":"t","meta":{"embedding":[9,9]},"embedding":[0.5]})");
  CHECK(nested.embedding == std::vector<float>{0.5f});
  const ManifestRecord in_text =
      accepted(R"({"key":"a","text":"\"embedding\":[7]","embedding":[0.25,1]})");
  CHECK(in_text.embedding == std::vector<float>{0.25f, 1.0f});
  CHECK(in_text.text == R"("embedding":[7])");
  CHECK(rejected(R"({"key":"a","text":"t","embedding":[1,2]} trailing)")
            .reason.find("invalid JSON") == 0);
}
