// winnow review: a person's verdicts applied, refused rows named, a second
// import changing nothing, and the verdicts surviving rejudge --labels,
// rejudge --consensus and a later ingest of the same images; the gallery's
// page escaping hostile keys and labels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using nlohmann::json;
using winnow::test::run_cli;
using winnow::test::slurp;

namespace {

// key -> the sample as `winnow export` gives it.
std::map<std::string, json> exported(const std::string& db, const std::string& out) {
  REQUIRE(run_cli("export --db " + db, out) == 0);
  std::map<std::string, json> samples;
  std::istringstream lines(slurp(out));
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line);
    samples[j["key"].get<std::string>()] = j;
  }
  return samples;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("review verdicts apply and survive rejudge and a later ingest", "[cli][review]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("d.db"), out = dir.file("out.txt"), err = dir.file("err.txt");
  REQUIRE(run_cli("init --db " + db, out, err) == 0);
  REQUIRE(run_cli("import-idx -q --limit 1000 --db " + db + " " + winnow::test::kFashionTestIdx,
                  out, err) == 0);
  std::map<std::string, json> before = exported(db, out);
  // A label issue the person keeps; an accepted sample relabelled to a class
  // its neighbours contradict; an accepted one dropped.
  std::string issue, relabelled, dropped;
  for (const auto& [key, s] : before) {
    if (s["status"] == "label_issue" && issue.empty()) issue = key;
    if (s["status"] == "accepted" && s["label"] == "0" && relabelled.empty()) relabelled = key;
    if (s["status"] == "accepted" && s["label"] == "1" && dropped.empty()) dropped = key;
  }
  REQUIRE(!issue.empty());
  REQUIRE(!relabelled.empty());
  REQUIRE(!dropped.empty());
  const std::string verdicts = dir.file("v.csv");
  write(verdicts, "item,verdict,label,reviewer,note\n" + issue + ",keep,,ann,looks right\n" +
                      relabelled + ",relabel,7,ann,\n" + dropped +
                      ",drop,,bob,\nnot-a-key,keep,,,\n" + dropped + ",maybe,,,\n");
  CHECK(run_cli("review --json --db " + db + " " + verdicts, out, err) == 1);
  json r = json::parse(slurp(out));
  CHECK(r["applied"] == 3);
  CHECK(r["refused"] == 2);
  CHECK(r["refusals"][0]["item"] == "not-a-key");
  CHECK(r["refusals"][1]["why"].get<std::string>().find("unknown verdict") != std::string::npos);

  const auto check_as_reviewed = [&](const char* after) {
    INFO("after " << after);
    std::map<std::string, json> now = exported(db, out);
    CHECK(now[issue]["status"] == "accepted");
    CHECK(now[issue]["review"]["verdict"] == "keep");
    CHECK(now[issue]["review"]["reviewer"] == "ann");
    CHECK(now[relabelled]["status"] == "accepted");
    CHECK(now[relabelled]["label"] == "7");
    CHECK(now[dropped]["status"] == "rejected");
  };
  check_as_reviewed("review");
  REQUIRE(run_cli("status --json --db " + db, out, err) == 0);
  const json reviews = json::parse(slurp(out))["reviews"];
  CHECK(reviews["samples"] == 3);
  CHECK(reviews["by_reviewer"]["ann"] == 2);
  CHECK(reviews["by_reviewer"]["bob"] == 1);
  CHECK(reviews["by_verdict"]["relabel"] == 1);

  // The same file again changes nothing.
  CHECK(run_cli("review --json --db " + db + " " + verdicts, out, err) == 1);
  r = json::parse(slurp(out));
  CHECK(r["applied"] == 0);
  CHECK(r["unchanged"] == 3);

  REQUIRE(run_cli("rejudge --labels --db " + db, out, err) == 0);
  CHECK(json::parse(slurp(out))["labels"]["kept_reviewed"] == 2);  // the dropped one is not judged
  check_as_reviewed("rejudge --labels");
  REQUIRE(run_cli("rejudge --consensus --db " + db, out, err) == 0);
  check_as_reviewed("rejudge --consensus");

  // The same images again under new keys: the dropped one's copy stays out as
  // its duplicate; the reviewed ones are untouched.
  REQUIRE(run_cli("import-idx -q --limit 1000 --prefix again --db " + db + " " +
                      winnow::test::kFashionTestIdx,
                  out, err) == 0);
  check_as_reviewed("a second import");
  std::map<std::string, json> now = exported(db, out);
  std::size_t copies_of_dropped = 0;
  for (const auto& [key, s] : now) {
    if (s["content_hash"] == now[dropped]["content_hash"] && key != dropped) {
      CHECK(s["status"] == "duplicate_exact");
      CHECK(s["duplicate_of_key"] == dropped);
      ++copies_of_dropped;
    }
  }
  CHECK(copies_of_dropped >= 1);

  // Asked explicitly, rejudge judges them again: the wrong label is flagged.
  REQUIRE(run_cli("rejudge --labels --override-reviews --db " + db, out, err) == 0);
  CHECK(exported(db, out)[relabelled]["status"] == "label_issue");
}

TEST_CASE("the gallery escapes hostile keys, labels and texts", "[cli][review][gallery]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("d.db"), out = dir.file("out.txt"), err = dir.file("err.txt");
  const std::string text =
      "the quick brown fox jumps over the lazy dog and keeps running through the field until "
      "night falls on the quiet village by the river";
  json a = {{"key", "<img src=x onerror=alert(1)>"},
            {"text", text},
            {"label", "\"><script>x()</script>"}};
  json b = {
      {"key", "b</div><script>y()</script>"}, {"text", text + " <b>again</b>"}, {"label", "ok"}};
  write(dir.file("m.jsonl"), a.dump() + "\n" + b.dump() + "\n");
  REQUIRE(run_cli("init --db " + db, out, err) == 0);
  REQUIRE(run_cli("ingest --db " + db + " " + dir.file("m.jsonl"), out, err) == 0);
  REQUIRE(exported(db, out)["b</div><script>y()</script>"]["status"] == "duplicate_near");
  const std::string page = dir.file("g.html");
  REQUIRE(run_cli("gallery --db " + db + " --out " + page, out, err) == 0);
  const std::string html = slurp(page);
  CHECK(html.find("<img src=x") == std::string::npos);
  CHECK(html.find("<script>x()") == std::string::npos);
  CHECK(html.find("<script>y()") == std::string::npos);
  CHECK(html.find("<b>again") == std::string::npos);
  CHECK(html.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(html.find("<mark>&lt;b&gt;again&lt;/b&gt;</mark>") !=
        std::string::npos);                                // the words that differ
  CHECK(html.find("<script>") == html.rfind("<script>"));  // the page's own script only
}

TEST_CASE("the gallery shows a near copy of a pixel array, whose content is not stored",
          "[cli][gallery]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("d.db"), out = dir.file("out.txt"), err = dir.file("err.txt");
  json a = {{"key", "a"}, {"width", 8}, {"height", 8}, {"label", "x"}};
  json b = {{"key", "b"}, {"width", 8}, {"height", 8}, {"label", "x"}};
  json pa = json::array(), pb = json::array();
  for (int i = 0; i < 64; ++i) {
    pa.push_back((i * 37) % 256);
    pb.push_back(std::min(255, (i * 37) % 256 + (i == 5 ? 1 : 0)));  // one level apart
  }
  a["pixels"] = pa;
  b["pixels"] = pb;
  write(dir.file("m.jsonl"), a.dump() + "\n" + b.dump() + "\n");
  REQUIRE(run_cli("init --db " + db, out, err) == 0);
  REQUIRE(run_cli("ingest --db " + db + " " + dir.file("m.jsonl"), out, err) == 0);
  REQUIRE(exported(db, out)["b"]["status"] == "duplicate_near");
  REQUIRE(run_cli("gallery --db " + db + " --out " + dir.file("g.html"), out, err) == 0);
  CHECK_THAT(slurp(out), Catch::Contains("2 pictures, 0 items without one"));
}
