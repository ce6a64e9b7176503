// Image-quality issues end to end through the real `winnow` CLI: colour clip
// art (Debian's openclipart-png) with planted blurry, dark, bright, flat,
// grey, stretched and tiny copies; `init` in flag and in reject mode, then
// `ingest`, `export` (JSONL and CSV), `status` and `report` (JSON, Markdown).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "image_test_files.h"
#include "support/temp_dir.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_quality.h"
#include "winnow/image/image_resize.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace winnow::image;
using namespace winnow::image::test;
using winnow::test::CliProcess;
using winnow::test::slurp;

namespace {

// Runs the CLI; returns its standard output, failing the test on a non-zero exit.
std::string cli(const winnow::test::TempDir& dir, const std::vector<std::string>& args,
                const std::string& tag) {
  CliProcess process(dir.path(), args, tag);
  const std::optional<int> rc = process.wait();
  INFO(slurp(fs::path(dir.path()) / (tag + ".err")));
  REQUIRE(rc == 0);
  return slurp(fs::path(dir.path()) / (tag + ".out"));
}

// The issue each planted copy was made to have.
const std::map<std::string, std::string> kPlanted = {
    {"blurry", "blurry"},        {"dark", "dark"},      {"bright", "bright"},
    {"flat", "low_information"}, {"grey", "grayscale"}, {"stretched", "odd_aspect_ratio"},
    {"tiny", "odd_size"}};

// Writes 30 colour clip-art images without any issue of their own and the
// planted copies of some of them; returns the manifest's path.
std::string write_manifest(const winnow::test::TempDir& dir) {
  std::vector<Image> originals;
  std::vector<fs::path> paths;
  for (const fs::path& path : clip_art(400)) {
    const std::vector<std::uint8_t> bytes = read_bytes(path.string());
    Image image = decode_image(bytes.data(), bytes.size());
    const ImageQualityScores s = measure_image_quality(image);
    const double aspect =
        double(std::min(image.width, image.height)) / double(std::max(image.width, image.height));
    if (s.blurry > 0.2 && s.dark > 0.6 && s.bright > 0.6 && s.low_information > 0.3 &&
        s.grayscale > 0.15 && aspect > 0.6 && image.width >= 90 && image.width <= 400) {
      originals.push_back(std::move(image));
      paths.push_back(path);
    }
    if (originals.size() == 30) break;
  }
  if (originals.size() < 30) FAIL("too few colour clip-art files (openclipart-png installed?)");
  std::ofstream manifest(dir.file("m.jsonl"));
  for (std::size_t i = 0; i < paths.size(); ++i) {
    manifest << json{{"key", "orig" + std::to_string(i)},
                     {"path", paths[i].string()},
                     {"label", "animal"},
                     {"source", "clipart"}}
                    .dump()
             << "\n";
  }
  const Image& o = originals[0];
  const bool wide = o.width >= o.height;
  const std::map<std::string, Image> planted = {
      {"blurry", blurred(originals[1], std::max<std::size_t>(3, o.width / 40))},
      {"dark", mapped(originals[2], [](double v) { return 0.25 * v; })},
      {"bright", mapped(originals[3], [](double v) { return 255 - 0.25 * (255 - v); })},
      {"flat", mapped(originals[4], [](double v) { return 200 + 0.05 * (v - 200); })},
      {"grey", desaturated(originals[5], 0.0)},
      {"stretched", resize_area(o, wide ? 3 * o.width : o.width, wide ? o.height : 3 * o.height)},
      {"tiny", resize_area(originals[6], 8, 8)},
  };
  for (const auto& [key, image] : planted) {
    write_bytes(dir.file(key + ".jpg"), encode_jpeg(image, 95));
    manifest << json{{"key", key},
                     {"path", dir.file(key + ".jpg")},
                     {"label", "planted"},
                     {"source", "vendor"}}
                    .dump()
             << "\n";
  }
  return dir.file("m.jsonl");
}

std::map<std::string, json> export_by_key(const winnow::test::TempDir& dir, const std::string& db) {
  std::map<std::string, json> rows;
  std::istringstream lines(cli(dir, {"export", "--db", db}, "export"));
  for (std::string line; std::getline(lines, line);) {
    const json row = json::parse(line);
    rows[row["key"].get<std::string>()] = row;
  }
  return rows;
}

std::set<std::string> issues_of(const json& row) {
  std::set<std::string> issues;
  if (row["image_quality"].is_null()) return issues;
  for (const json& issue : row["image_quality"]["issues"]) issues.insert(issue.get<std::string>());
  return issues;
}

}  // namespace

TEST_CASE("image-quality issues: flagged, counted, reported (flag mode)", "[image][quality]") {
  winnow::test::TempDir dir;
  const std::string manifest = write_manifest(dir);
  const std::string db = dir.file("flag.db");
  const json init = json::parse(cli(dir, {"init", "--db", db}, "init"));
  CHECK(init["config"]["image_issues"]["action"] == "flag");
  cli(dir, {"ingest", "--db", db, manifest}, "ingest");

  const std::map<std::string, json> rows = export_by_key(dir, db);
  for (const auto& [key, issue] : kPlanted) {
    INFO(key << ": " << rows.at(key).dump());
    CHECK(issues_of(rows.at(key)).count(issue) == 1);
    CHECK(rows.at(key)["status"] != "rejected");  // flag keeps the decision
    CHECK(rows.at(key)["image_quality"]["scores"][issue].get<double>() >= 0.0);
  }
  for (int i = 0; i < 30; ++i) {
    const json& row = rows.at("orig" + std::to_string(i));
    INFO(row.dump());
    REQUIRE(row["image_quality"].is_object());
    CHECK(row["image_quality"]["width"].get<int>() >= 90);
    for (const char* issue :
         {"blurry", "dark", "bright", "low_information", "grayscale", "odd_aspect_ratio"}) {
      CHECK(issues_of(row).count(issue) == 0);
    }
  }

  const json status = json::parse(cli(dir, {"status", "--db", db, "--json"}, "status"));
  CHECK(status["image_issues"]["images"] == 37);
  for (const auto& [key, issue] : kPlanted) CHECK(status["image_issues"]["issues"][issue] >= 1);
  CHECK_THAT(cli(dir, {"status", "--db", db}, "status_text"), Catch::Contains("image files: 37"));

  const json report = json::parse(cli(dir, {"report", "--db", db}, "report"));
  const json& quality = report["image_quality"];
  CHECK(quality["images"] == 37);
  CHECK(quality["with_issues"].get<int>() >= 7);
  // Per source and per class, worst first: every planted copy has an issue.
  CHECK(quality["sources"][0]["name"] == "vendor");
  CHECK(quality["sources"][0]["share_with_issues"] == 1.0);
  CHECK(quality["classes"][0]["name"] == "planted");
  const json& issues = quality["sources"][0]["issues"];
  REQUIRE(issues.size() == 7);
  for (std::size_t i = 1; i < issues.size(); ++i) {
    CHECK(issues[i - 1]["share"].get<double>() >= issues[i]["share"].get<double>());
  }
  const std::string markdown = cli(dir, {"report", "--db", db, "--format", "md"}, "report_md");
  CHECK_THAT(markdown, Catch::Contains("Image-quality issues per source"));
  CHECK_THAT(markdown, Catch::Contains("Image-quality issues per class"));

  const std::string csv = cli(dir, {"export", "--db", db, "--format", "csv"}, "export_csv");
  CHECK_THAT(csv.substr(0, csv.find('\n')),
             Catch::EndsWith("image_width,image_height,image_issues,blurry_score,dark_score,"
                             "bright_score,low_information_score,grayscale_score,"
                             "odd_aspect_ratio_score,odd_size_score"));
}

TEST_CASE("image-quality issues: reject mode rejects with the issue and score",
          "[image][quality]") {
  winnow::test::TempDir dir;
  const std::string manifest = write_manifest(dir);
  const std::string db = dir.file("reject.db");
  cli(dir,
      {"init", "--db", db, "--image-issues", "reject", "--image-issue-threshold", "odd_size=0.25"},
      "init");
  cli(dir, {"ingest", "--db", db, manifest}, "ingest");
  const std::map<std::string, json> rows = export_by_key(dir, db);
  for (const auto& [key, issue] : kPlanted) {
    const json& row = rows.at(key);
    INFO(row.dump());
    CHECK(row["status"] == "rejected");
    CHECK_THAT(row["reason"].get<std::string>(),
               Catch::Contains(key + ".jpg' has image-quality issues: ") &&
                   Catch::Contains(issue + " (score "));
  }
  int originals_rejected = 0;
  for (int i = 0; i < 30; ++i) {
    originals_rejected += rows.at("orig" + std::to_string(i))["status"] == "rejected";
  }
  CHECK(originals_rejected == 0);

  // A bad threshold is refused by init, naming it.
  CliProcess bad(dir.path(),
                 {"init", "--db", dir.file("bad.db"), "--image-issue-threshold", "fuzzy=0.2"},
                 "bad");
  CHECK(bad.wait() != 0);
  CHECK_THAT(slurp(fs::path(dir.path()) / "bad.err"),
             Catch::Contains("'fuzzy' is not an image issue"));
}
