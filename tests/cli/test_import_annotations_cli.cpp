// `winnow import-annotations` as a user runs it: the README's three commands
// (init, import a labelling tool's CSV, report), the summary with its
// rejection reasons, export's reason column, Label Studio's JSON, and bad
// files refused with the file and line named and the database untouched.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/curation_test_helpers.h"
#include "support/cli_process.h"

namespace {

using nlohmann::json;
using winnow::test::CliProcess;

struct Run {
  int exit_code = -1;
  std::string out, err;
};

Run run_cli(const winnow::curation::test::ScratchDir& dir, const std::vector<std::string>& args,
            const std::string& tag) {
  CliProcess cli(std::filesystem::path(dir.file("")), args, tag);
  const std::optional<int> code = cli.wait(60);
  REQUIRE(code.has_value());
  return {*code, cli.out(), cli.err()};
}

json run_json(const winnow::curation::test::ScratchDir& dir, const std::vector<std::string>& args,
              const std::string& tag) {
  const Run r = run_cli(dir, args, tag);
  INFO(tag << " stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("import-annotations CLI: from a labelling tool's CSV to a report in three commands",
          "[curation][annotations][cli]") {
  winnow::curation::test::ScratchDir dir;
  const Run help = run_cli(dir, {"import-annotations", "--help"}, "help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("Example: winnow import-annotations --db"));

  // The README's recipe, its votes.csv and the lines it shows.
  {
    const std::string votes = dir.write("readme-votes.csv",
                                        "item,annotator,label\n"
                                        "img1,alice,cat\nimg1,bob,cat\nimg1,carol,dog\n"
                                        "img2,alice,dog\nimg2,bob,dog\nimg2,carol,dog\n"
                                        "img3,alice,cat\nimg3,bob,dog\nimg3,carol,dog\n");
    const std::string labels = dir.file("readme.db");
    CHECK(run_cli(dir, {"init", "--db", labels}, "readme-init").exit_code == 0);
    const json imported = run_json(dir, {"import-annotations", "--db", labels, votes}, "readme");
    CHECK(imported["annotations"] == 9);
    CHECK(imported["items"] == 3);
    CHECK(imported["counts"]["accepted"] == 3);
    const Run md = run_cli(
        dir, {"report", "--db", labels, "--format", "md", "--out", dir.file("report.md")}, "md1");
    CHECK(md.exit_code == 0);
    const std::string text = winnow::test::slurp(dir.file("report.md"));
    CHECK_THAT(text, Catch::Contains("| carol | annotator | 0 | 3 | 52.0% | 13.4–88.3% | 66.7% |"));
    CHECK(text.find("| carol |") < text.find("| alice |"));
  }

  // 4 items by 3 annotators; w3 is wrong twice; one row has no label.
  const std::string csv = dir.write("votes.csv",
                                    "item,annotator,label,gold\n"
                                    "\"a, first\",w1,cat,cat\n"
                                    "\"a, first\",w2,cat,\n"
                                    "\"a, first\",w3,dog,\n"
                                    "b,w1,dog,\n"
                                    "b,w2,dog,\n"
                                    "b,w3,dog,\n"
                                    "c,w1,cat,\n"
                                    "c,w2,cat,\n"
                                    "c,w3,dog,\n"
                                    "d,w1,dog,\n"
                                    "d,w2,dog,\n"
                                    "d,w3,dog,\n"
                                    "e,w1,,\n");
  const std::string db = dir.file("labels.db");
  CHECK(run_cli(dir, {"init", "--db", db}, "init").exit_code == 0);
  const json summary = run_json(dir, {"import-annotations", "--db", db, csv}, "import");
  CHECK(summary["format"] == "csv");
  CHECK(summary["items"] == 5);
  CHECK(summary["annotations"] == 12);
  CHECK(summary["counts"]["accepted"] == 4);
  CHECK(summary["counts"]["rejected"] == 1);
  REQUIRE(summary["rejections"].size() == 1);
  CHECK(summary["rejections"][0]["reason"] == "line 14: empty label");
  CHECK(summary["rejections"][0]["example_key"] == "e");

  const json report = run_json(dir, {"report", "--db", db}, "report");
  CHECK(report["dataset"]["annotations"] == 12);
  CHECK(report["dataset"]["multiply_annotated_samples"] == 4);
  CHECK(report["dataset"]["krippendorff_alpha"].is_number());
  CHECK(report["classes"].size() == 2);
  std::map<std::string, json> annotators;
  for (const json& s : report["sources"])
    if (s["kind"] == "annotator") annotators[s["name"].get<std::string>()] = s;
  REQUIRE(annotators.size() == 3);
  CHECK(annotators["w1"]["agreement_with_consensus"] == 1.0);
  CHECK(annotators["w3"]["agreement_with_consensus"] == 0.5);
  CHECK(report["sources"][0]["name"] == "w3");  // worst first
  const Run markdown = run_cli(dir, {"report", "--db", db, "--format", "md"}, "md");
  CHECK(markdown.exit_code == 0);
  CHECK_THAT(markdown.out, Catch::Contains("w3"));

  // Export says why each sample is there, and which one was refused.
  const Run exported = run_cli(dir, {"export", "--db", db, "--format", "csv"}, "export");
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.out, Catch::Contains("annotations only: no content"));
  CHECK_THAT(exported.out, Catch::Contains("line 14: empty label"));

  // The same file again: the same batch, skipped.
  const json again = run_json(dir, {"import-annotations", "--db", db, csv}, "again");
  CHECK(again["skipped"] == true);

  // Bad files: the file and line named on stderr, exit 1, nothing written.
  const json before = run_json(dir, {"status", "--db", db, "--json"}, "before");
  const std::string unclosed = dir.write("bad.csv", "item,annotator,label\nx,w1,cat\n\"y,w1,dog\n");
  const Run bad = run_cli(dir, {"import-annotations", "--db", db, unclosed}, "bad");
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.empty());
  CHECK_THAT(bad.err,
             Catch::Contains("bad.csv: line 3: a quoted field opened here is never closed"));
  const std::string no_label = dir.write("cols.csv", "item,annotator,vote\nx,w1,cat\n");
  const Run columns = run_cli(dir, {"import-annotations", "--db", db, no_label}, "columns");
  CHECK(columns.exit_code == 1);
  CHECK_THAT(columns.err, Catch::Contains("cols.csv: line 1: the header has no column 'label'"));
  // The user's own file behind a symbolic link is read, as every tool reads it
  // (its rows are the same file's: nothing new, already imported).
  std::filesystem::create_symlink(csv, dir.file("link.csv"));
  const Run link = run_cli(dir, {"import-annotations", "--db", db, dir.file("link.csv")}, "link");
  CHECK(link.exit_code == 0);
  const Run huge = run_cli(dir,
                           {"import-annotations", "--db", db, "--max-mb", "1",
                            dir.write("huge.csv", std::string(2u << 20, 'x'))},
                           "huge");
  CHECK(huge.exit_code == 1);
  CHECK_THAT(huge.err, Catch::Contains("huge.csv"));
  const std::string broken = dir.write("broken.json", "[{\"id\": 1,\n\"annotations\": [\n");
  const Run json_error = run_cli(dir, {"import-annotations", "--db", db, broken}, "broken");
  CHECK(json_error.exit_code == 1);
  CHECK_THAT(json_error.err, Catch::Contains("broken.json: line 3: not valid JSON"));
  CHECK(run_json(dir, {"status", "--db", db, "--json"}, "after")["total"] == before["total"]);

  // Label Studio's JSON export of a choices project.
  const std::string studio = dir.write("project.json", R"([
    {"id": 10, "annotations": [
      {"completed_by": 1, "result": [{"type": "choices", "value": {"choices": ["cat"]}}]},
      {"completed_by": 2, "result": [{"type": "choices", "value": {"choices": ["cat"]}}]}]},
    {"id": 11, "annotations": [
      {"completed_by": 1, "result": [{"type": "choices", "value": {"choices": ["dog"]}}]},
      {"completed_by": 2, "was_cancelled": true, "result": []}]}])");
  const json ls =
      run_json(dir, {"import-annotations", "--db", db, "--source", "studio", studio}, "studio");
  CHECK(ls["format"] == "label-studio");
  CHECK(ls["counts"]["accepted"] == 2);
  CHECK(ls["annotations"] == 3);
  CHECK(ls["annotations_cancelled"] == 1);
  const json status = run_json(dir, {"status", "--db", db, "--json"}, "status");
  CHECK(status["sources"]["studio"]["accepted"] == 2);
}

TEST_CASE("import-annotations CLI: a later round for the same items adds to them",
          "[curation][annotations][cli]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("rounds.db");
  REQUIRE(run_cli(dir, {"init", "--db", db}, "init").exit_code == 0);
  const std::string first = dir.write("r1.csv",
                                      "item,annotator,label\n"
                                      "img1,alice,cat\nimg1,bob,dog\nimg1,carol,dog\n"
                                      "img2,alice,dog\nimg2,bob,dog\n");
  const json one = run_json(dir, {"import-annotations", "--json", "--db", db, first}, "r1");
  CHECK(one["counts"]["accepted"] == 2);
  // Round two: alice again with the same label (unchanged), bob changes his
  // mind on img1 (replaced), dave is new on both (added); img3 is new.
  const std::string second = dir.write("r2.csv",
                                       "item,annotator,label\n"
                                       "img1,alice,cat\nimg1,bob,cat\nimg1,dave,cat\n"
                                       "img2,dave,dog\nimg3,alice,cat\n");
  const json two = run_json(dir, {"import-annotations", "--json", "--db", db, second}, "r2");
  CHECK(two["counts"]["total"] == 1);  // img3 only: no rejected junk for img1 and img2
  CHECK(two["counts"]["rejected"] == 0);
  CHECK(two["annotation_rounds"]["added"] == 2);
  CHECK(two["annotation_rounds"]["replaced"] == 1);
  CHECK(two["annotation_rounds"]["unchanged"] == 1);
  CHECK(two["annotation_rounds"]["relabelled"] == 1);  // img1: dog by 2 to 1, now cat by 3 to 1

  // The same file again, as a new batch: nothing changes.
  const json again =
      run_json(dir, {"import-annotations", "--json", "--redo", "--db", db, second}, "r2-again");
  CHECK(again["counts"]["total"] == 0);
  CHECK(again["annotation_rounds"]["unchanged"] == 5);  // img3 is stored now too
  CHECK(again["annotation_rounds"]["items"] == 0);

  std::map<std::string, json> samples;
  const Run exported = run_cli(dir, {"export", "--db", db}, "export");
  REQUIRE(exported.exit_code == 0);
  std::istringstream lines(exported.out);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    samples[j["key"].get<std::string>()] = j;
  }
  REQUIRE(samples.size() == 3);
  CHECK(samples["img1"]["label"] == "cat");
  CHECK(samples["img1"]["annotations"]["count"] == 4);
  CHECK(samples["img1"]["annotations"]["majority"] == "cat");
  CHECK(samples["img2"]["annotations"]["count"] == 3);
  CHECK(samples["img2"]["annotations"]["consensus"] == "dog");

  // The report: each annotator's decisive labels and, with a pool, his spend.
  const std::string pool = dir.write("pool.csv", "annotator,cost\nalice,2\ndave,0.5\n");
  const json report = run_json(dir, {"report", "--db", db, "--annotators", pool}, "report");
  std::map<std::string, json> sources;
  for (const json& source : report["sources"]) sources[source["name"].get<std::string>()] = source;
  CHECK(sources["alice"]["cost_spent"] == Approx(2.0 * sources["alice"]["labels"].get<double>()));
  CHECK(sources["dave"]["cost_per_label"] == 0.5);
  CHECK(sources["bob"].count("cost_spent") == 0);
  CHECK(sources["alice"]["decisive_labels"].get<std::int64_t>() >= 0);
  CHECK(sources["alice"]["decisive_labels"].get<std::int64_t>() <=
        sources["alice"]["labels"].get<std::int64_t>());

  // Each batch's consensus: the annotations by its end, growing round by round.
  const json& batches = report["batches"];
  REQUIRE(batches.size() == 3);
  CHECK(batches[0]["consensus"]["annotations"] == 5);
  CHECK(batches[1]["consensus"]["annotations"] == 8);  // 2 added, 1 replaced, img3's 1
  CHECK(batches[2]["consensus"]["annotations"] == 8);  // the same file again
  CHECK(batches[1]["consensus"]["samples"] == 3);
  CHECK(batches[1]["consensus"]["expected_accuracy"].get<double>() > 0.5);

  // rejudge --consensus covers samples without content.
  const json rejudged = run_json(dir, {"rejudge", "--consensus", "--db", db}, "rejudge");
  CHECK(rejudged["labels"]["annotations_only"] == 3);
}

TEST_CASE("import-annotations and ingest CLI: a file of junk is counted, not stored row by row",
          "[curation][annotations][cli]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("junk.db");
  REQUIRE(run_cli(dir, {"init", "--db", db}, "init").exit_code == 0);
  // 25,000 empty tasks around two real ones: read task by task, the first
  // 1,000 refusals stored, the other 24,000 counted in one more.
  std::string tasks = R"([{"id": 1, "annotations": [{"completed_by": 7, "result": [{"type":)"
                      R"( "choices", "value": {"choices": ["cat"]}}]}]})";
  for (int i = 0; i < 25000; ++i) tasks += ",{}";
  tasks += R"(,{"id": 2, "annotations": [{"completed_by": 7, "result": [{"type": "choices",)"
           R"( "value": {"choices": ["dog"]}}]}]}])";
  const std::string export_file = dir.write("export.json", tasks);
  const json imported =
      run_json(dir, {"import-annotations", "--json", "--db", db, export_file}, "junk tasks");
  CHECK(imported["counts"]["accepted"] == 2);
  CHECK(imported["counts"]["rejected"] == 1001);
  const json status = run_json(dir, {"status", "--db", db, "--json"}, "status");
  CHECK(status["total"] == 1003);
  bool summarised = false;
  for (const json& group : imported["rejections"]) {
    summarised =
        summarised || group["reason"].get<std::string>().find(
                          "24000 more tasks refused past the first 1000") != std::string::npos;
  }
  CHECK(summarised);

  // A manifest of junk lines: past 10,000 refused lines the rest are counted.
  std::string lines;
  for (int i = 0; i < 10050; ++i) lines += "not a record\n";
  const std::string manifest = dir.write("junk.jsonl", lines);
  const Run junk = run_cli(dir, {"ingest", "--json", "--db", db, manifest}, "junk lines");
  CHECK(junk.exit_code == 1);  // every record refused
  const json ingested = json::parse(junk.out);
  CHECK(ingested["counts"]["rejected"] == 10000);
  CHECK(ingested["rejected_not_stored"] == 50);
  CHECK(ingested["rejections"][0]["count"] == 10050);
}
