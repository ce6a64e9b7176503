// The readers of `winnow import-annotations`: RFC 4180 CSV records with their
// lines, the long annotation CSV and Label Studio's JSON export grouped by
// item, and the importer's file handling (links, size limit, format by name).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "winnow/curation/readers/annotations/annotation_importer.h"
#include "winnow/curation/readers/annotations/annotation_table.h"
#include "winnow/curation/readers/annotations/csv_reader.h"
#include "winnow/error.h"

namespace {

using namespace winnow::curation;
using namespace winnow::curation::readers;
using Fields = std::vector<std::string>;

// Every record of `text` with the line it starts on.
std::vector<std::pair<std::size_t, Fields>> csv_records(const std::string& text) {
  CsvReader reader(text, "t.csv");
  std::vector<std::pair<std::size_t, Fields>> records;
  Fields fields;
  while (reader.next(fields)) records.emplace_back(reader.line(), fields);
  return records;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const winnow::Error& e) {
    CHECK(e.kind() == winnow::ErrorKind::invalid_input);
    return e.what();
  }
  FAIL("no winnow::Error thrown");
  return {};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("CsvReader: RFC 4180 quoting, line endings and the line of every record",
          "[curation][annotations][csv]") {
  const auto records = csv_records(
      "\xEF\xBB\xBFitem,annotator,label\r\n"
      "a,w1,cat\r\n"
      "\r\n"
      "\"b, the second\",\"w\"\"2\",\"two\nlines\"\n"
      "c,,\n"
      "d,w\"3,dog");  // no final newline; a quote inside an unquoted field is text
  REQUIRE(records.size() == 5);
  CHECK(records[0] == std::pair<std::size_t, Fields>{1, {"item", "annotator", "label"}});
  CHECK(records[1] == std::pair<std::size_t, Fields>{2, {"a", "w1", "cat"}});
  CHECK(records[2] == std::pair<std::size_t, Fields>{4, {"b, the second", "w\"2", "two\nlines"}});
  CHECK(records[3] == std::pair<std::size_t, Fields>{6, {"c", "", ""}});
  CHECK(records[4] == std::pair<std::size_t, Fields>{7, {"d", "w\"3", "dog"}});
  CHECK(csv_records("").empty());
  CHECK(csv_records("\n\r\n").empty());
  CHECK(csv_records("\"\"") == std::vector<std::pair<std::size_t, Fields>>{{1, {""}}});
}

TEST_CASE("CsvReader: what cannot be read as CSV names the file and the line",
          "[curation][annotations][csv]") {
  CHECK_THAT(error_of([] { csv_records("a,b\nc,\"never\nclosed,x\n"); }),
             Catch::Contains("t.csv: line 2: a quoted field opened here is never closed"));
  CHECK_THAT(error_of([] { csv_records("a,b\n\"x\"y,z\n"); }),
             Catch::Contains("t.csv: line 2: text after the closing quote"));
  CHECK_THAT(error_of([] { csv_records(std::string("a,b\nc\n\0d\n", 9)); }),
             Catch::Contains("t.csv: line 3: a NUL byte"));
}

TEST_CASE("annotation CSV: rows grouped by item, gold and source, crowd-kit's column names",
          "[curation][annotations][csv]") {
  const AnnotationTable table = read_annotation_csv(
      "label,worker,extra,task,gold,source\n"
      "cat,w1,x,img1,cat,\n"
      "dog,w1,x,img2,,vendor\n"
      "cat,w2,x,img1,,\n"
      "dog,w2,x,img2,,vendor\n"
      "dog,w3,x,img1,cat,\n",
      "crowd.csv");
  REQUIRE(table.items().size() == 2);
  CHECK(table.annotations() == 5);
  const AnnotatedItem& img1 = table.items()[0];
  CHECK(img1.key == "img1");
  CHECK(img1.line == 2);
  CHECK(img1.refusal.empty());
  CHECK(img1.gold == std::optional<std::string>("cat"));
  CHECK(img1.source.empty());
  REQUIRE(img1.annotations.size() == 3);
  CHECK(img1.annotations[2].annotator == "w3");
  CHECK(img1.annotations[2].label == "dog");
  const AnnotatedItem& img2 = table.items()[1];
  CHECK(img2.key == "img2");
  CHECK_FALSE(img2.gold);
  CHECK(img2.source == "vendor");
  CHECK(img2.annotations.size() == 2);
}

TEST_CASE("annotation CSV: an annotator votes once per item, the latest row counting",
          "[curation][annotations][csv]") {
  std::string csv = "item,annotator,label\nimg1,a2,dog\nimg1,a3,dog\n";
  for (int i = 0; i < 50; ++i) csv += "img1,a1,cat\n";
  csv += "img1,a1,bird\nimg2,a1,cat\n";
  const AnnotationTable table = read_annotation_csv(csv, "stuffed.csv");
  REQUIRE(table.items().size() == 2);
  CHECK(table.annotations() == 4);  // a2, a3 and a1 on img1; a1 on img2
  CHECK(table.repeated == 50);
  const AnnotatedItem& img1 = table.items()[0];
  REQUIRE(img1.annotations.size() == 3);
  CHECK(img1.annotations[2].annotator == "a1");
  CHECK(img1.annotations[2].label == "bird");  // the latest
}

TEST_CASE("annotation CSV: items that print alike stay apart", "[curation][annotations][csv]") {
  // "a<LF>b" (quoted, a newline inside) and a\x0ab (typed): two items.
  const AnnotationTable table =
      read_annotation_csv("item,annotator,label\n\"a\nb\",w1,cat\na\\x0ab,w1,dog\n", "alike.csv");
  REQUIRE(table.items().size() == 2);
  CHECK(table.items()[0].key == "a\\x0ab");
  CHECK(table.items()[1].key == "a\\\\x0ab");
}

TEST_CASE("annotation CSV: a bad row refuses its item with the line; a bad header the file",
          "[curation][annotations][csv]") {
  const AnnotationTable table = read_annotation_csv(
      "item,annotator,label,gold,source\n"
      "a,w1,cat,,\n"
      "b,w1,,,\n"        // empty label
      "c,w1,cat\n"       // too few fields
      ",w1,cat,,\n"      // no item: an item of its own
      "a,w2,dog,dog,\n"  // gold given
      "a,w3,dog,cat,\n"  // ... and another: a conflict
      "d,,cat,,\n"       // empty annotator
      "e,w1,cat,,s1\n"
      "e,w2,cat,,s2\n",  // two sources
      "bad.csv");
  std::map<std::string, std::string> refusal;
  for (const AnnotatedItem& item : table.items()) refusal[item.key] = item.refusal;
  CHECK(refusal.at("a") == "line 7: gold label 'cat' differs from the item's earlier 'dog'");
  CHECK(refusal.at("b") == "line 3: empty label");
  CHECK(refusal.at("c") == "line 4: 3 fields where the header has 5");
  CHECK(refusal.at("") == "line 5: empty item");
  CHECK(refusal.at("d") == "line 8: empty annotator");
  CHECK(refusal.at("e") == "line 10: source 's2' differs from the item's earlier 's1'");

  CHECK_THAT(error_of([] { read_annotation_csv("item,label\na,cat\n", "h.csv"); }),
             Catch::Contains("h.csv: line 1: the header has no column 'annotator'"));
  CHECK_THAT(error_of([] { read_annotation_csv("item,task,annotator,label\n", "h.csv"); }),
             Catch::Contains("h.csv: line 1: column 'item' appears twice"));
  CHECK_THAT(error_of([] { read_annotation_csv("", "h.csv"); }),
             Catch::Contains("h.csv: empty file"));
}

TEST_CASE("Label Studio export: choices per annotator, cancelled, ground truth, bad tasks",
          "[curation][annotations][label-studio]") {
  const std::string json = R"([
    {"id": 1, "data": {"image": "/data/1.jpg"}, "annotations": [
      {"completed_by": 7, "result": [{"type": "choices", "from_name": "animal",
        "value": {"choices": ["cat"]}}]},
      {"completed_by": {"id": 8, "email": "ann@example.org"}, "ground_truth": true,
        "result": [{"type": "choices", "from_name": "animal", "value": {"choices": ["dog"]}}]},
      {"completed_by": 9, "was_cancelled": true, "result": []},
      {"completed_by": 10, "result": [{"type": "rectanglelabels", "value": {}}]}]},
    {"id": "two", "annotations": []},
    {"id": 3, "annotations": [{"completed_by": 7, "result": [
      {"type": "choices", "from_name": "animal", "value": {"choices": ["cat"]}},
      {"type": "choices", "from_name": "colour", "value": {"choices": ["red"]}}]}]},
    {"id": 4, "annotations": [{"completed_by": 7, "result": [
      {"type": "choices", "from_name": "animal", "value": {"choices": ["cat", "dog"]}}]}]},
    {"data": {}},
    17
  ])";
  const AnnotationTable table = read_label_studio_json(json, "ls.json");
  REQUIRE(table.items().size() == 6);
  const AnnotatedItem& one = table.items()[0];
  CHECK(one.key == "1");
  CHECK(one.line == 1);
  CHECK(one.refusal.empty());
  REQUIRE(one.annotations.size() == 2);
  CHECK(one.annotations[0].annotator == "7");
  CHECK(one.annotations[0].label == "cat");
  CHECK(one.annotations[1].annotator == "ann@example.org");
  CHECK(one.gold == std::optional<std::string>("dog"));
  CHECK(table.cancelled == 1);
  CHECK(table.without_choice == 1);
  CHECK(table.items()[1].key == "two");
  CHECK(table.items()[1].annotations.empty());
  CHECK_THAT(table.items()[2].refusal,
             Catch::Contains("task 3: annotations[0]: choices of several controls (animal, "
                             "colour)"));
  CHECK_THAT(table.items()[3].refusal, Catch::Contains("multi-label choices are not supported"));
  CHECK(table.items()[4].refusal == "task 5: no 'id' (a string or an integer)");
  CHECK(table.items()[5].refusal == "task 6: not a task object but number");

  // Naming the control reads task 3.
  const AnnotationTable colour = read_label_studio_json(json, "ls.json", "colour");
  CHECK(colour.items()[2].refusal.empty());
  REQUIRE(colour.items()[2].annotations.size() == 1);
  CHECK(colour.items()[2].annotations[0].label == "red");

  CHECK_THAT(
      error_of([] { read_label_studio_json("[\n{\"id\": 1,\n\"annotations\": [}\n]", "b.json"); }),
      Catch::Contains("b.json: line 3: not valid JSON"));
  CHECK_THAT(error_of([] { read_label_studio_json("{\"id\": 1}", "b.json"); }),
             Catch::Contains("b.json: expected a JSON list of tasks"));
  // A number JSON cannot hold is bad input naming the file, not an internal error.
  CHECK_THAT(error_of([] { read_label_studio_json("[{\"id\": 1e999}]", "big.json"); }),
             Catch::Contains("big.json: not valid JSON") && Catch::Contains("1e999"));
  bool refused_as_input = false;
  try {
    read_label_studio_json("[{\"id\": 1e999}]", "big.json");
  } catch (const winnow::Error& e) {
    refused_as_input = e.kind() == winnow::ErrorKind::invalid_input;
  }
  CHECK(refused_as_input);
}

TEST_CASE("AnnotationImporter: records without content, rejections, hostile files",
          "[curation][annotations]") {
  winnow::test::TempDir dir;
  const std::string csv = dir.file("votes.csv");
  write_file(csv, "item,annotator,label,gold\na,w1,cat,\nb,w1,,\na,w2,dog,dog\n");
  AnnotationImportOptions options;
  options.source = "crowd";
  AnnotationImporter importer(csv, options);
  CHECK(importer.format() == AnnotationFormat::csv);
  CHECK(importer.items() == 2);
  ManifestEntry entry;
  REQUIRE(importer.next(entry));
  REQUIRE(entry.ok());
  CHECK(entry.record->kind == ContentKind::none);
  CHECK(entry.record->key == "a");
  CHECK(entry.record->line == 2);
  CHECK(entry.record->label == std::optional<std::string>("dog"));
  CHECK(entry.record->source == "crowd");
  CHECK(entry.record->annotations.size() == 2);
  REQUIRE(importer.next(entry));
  REQUIRE_FALSE(entry.ok());
  CHECK(entry.rejection->key == "b");
  CHECK(entry.rejection->reason == "line 3: empty label");
  CHECK(entry.rejection->source == "crowd");
  CHECK_FALSE(importer.next(entry));

  // The batch identity follows the bytes and the options.
  AnnotationImporter again(csv, options);
  CHECK(again.checksum() == importer.checksum());
  options.source = "other";
  CHECK(AnnotationImporter(csv, options).checksum() != importer.checksum());

  // A .json file is a Label Studio export unless told otherwise.
  const std::string ls = dir.file("export.json");
  write_file(ls, R"([{"id": 5, "annotations": [{"completed_by": 1, "was_cancelled": true}]}])");
  AnnotationImporter studio(ls, {});
  CHECK(studio.format() == AnnotationFormat::label_studio);
  REQUIRE(studio.next(entry));
  REQUIRE_FALSE(entry.ok());
  CHECK_THAT(entry.rejection->reason, Catch::Contains("task 1: no annotations"));
  AnnotationImportOptions as_csv;
  as_csv.format = parse_annotation_format("csv");
  CHECK_THAT(error_of([&] { AnnotationImporter(ls, as_csv); }),
             Catch::Contains("the header has no column"));
  CHECK_THROWS_AS(parse_annotation_format("xlsx"), winnow::Error);

  // Hostile files: a symbolic link, a file over the limit, a folder.
  std::filesystem::create_symlink(csv, dir.file("link.csv"));
  CHECK_THROWS_AS(AnnotationImporter(dir.file("link.csv"), {}), winnow::Error);
  AnnotationImportOptions small;
  small.file.max_bytes = 16;
  CHECK_THROWS_AS(AnnotationImporter(csv, small), winnow::Error);
  CHECK_THROWS_AS(AnnotationImporter(dir.path().string(), {}), winnow::Error);
}
