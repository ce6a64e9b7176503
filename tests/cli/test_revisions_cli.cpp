// `winnow export --revision R` and `winnow diff FROM TO` through the real CLI:
// two batches and a person's verdicts make three revisions; the dataset at
// each revision, and what changed between them, come back as they were.
#include <catch2/catch.hpp>

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

// Distinct texts: no two are near duplicates.
std::string text_record(int i, const std::string& label, const std::string& key = "") {
  std::string text = "record " + std::to_string(i) + ":";
  for (int w = 0; w < 12; ++w) text += " w" + std::to_string(i * 31 + w * 7);
  return json{
             {"key", key.empty() ? "t" + std::to_string(i) : key}, {"text", text}, {"label", label}}
             .dump() +
         "\n";
}

std::map<std::string, json> by_key(const std::string& jsonl) {
  std::map<std::string, json> out;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    out[j["key"].get<std::string>()] = j;
  }
  return out;
}

}  // namespace

TEST_CASE("export --revision and diff give the dataset at each revision and the changes",
          "[cli][revisions]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  const std::string err = dir.file("err.txt");
  std::string first, second;
  for (int i = 0; i < 20; ++i) first += text_record(i, i % 2 ? "odd" : "even");
  for (int i = 20; i < 30; ++i) second += text_record(i, i % 2 ? "odd" : "even");
  second += text_record(3, "odd", "tc3");  // an exact copy of t3
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("ingest --json --db " + db + " " + dir.write("a.jsonl", first), out) == 0);
  REQUIRE(run_cli("ingest --json --db " + db + " " + dir.write("b.jsonl", second), out) == 0);
  const std::string verdicts =
      dir.write("verdicts.csv", "item,verdict,label\nt1,relabel,even\nt2,drop,\n");
  REQUIRE(run_cli("review --json --db " + db + " " + verdicts, out) == 0);
  REQUIRE(run_cli("status --json --db " + db, out) == 0);
  CHECK(json::parse(slurp(out))["revision"] == 3);

  // Revision 1: the first batch only, as it was then.
  REQUIRE(run_cli("export --db " + db + " --revision 1", out, err) == 0);
  const auto at1 = by_key(slurp(out));
  CHECK(at1.size() == 20);
  CHECK(at1.at("t1")["label"] == "odd");
  CHECK(at1.at("t2")["status"] == "accepted");
  CHECK(at1.at("t1")["revision"] == 1);

  // The current revision: what a plain export says, sample by sample.
  REQUIRE(run_cli("export --db " + db + " --revision 3", out, err) == 0);
  const auto at3 = by_key(slurp(out));
  REQUIRE(run_cli("export --db " + db, out, err) == 0);
  const auto now = by_key(slurp(out));
  REQUIRE(at3.size() == now.size());
  CHECK(at3.size() == 31);
  for (const auto& [key, j] : now) {
    INFO(key);
    CHECK(at3.at(key)["status"] == j["status"]);
    CHECK(at3.at(key)["label"] == j["label"]);
    CHECK(at3.at(key)["duplicate_of_key"] == j["duplicate_of_key"]);
  }
  CHECK(at3.at("tc3")["status"] == "duplicate_exact");
  CHECK(at3.at("tc3")["duplicate_of_key"] == "t3");
  CHECK(at3.at("t1")["revision"] == 3);
  CHECK_THAT(at3.at("t2")["reason"].get<std::string>(), Catch::Contains("drop"));

  // What changed from 1 to 3: ten added, t2 removed, t1 relabelled; the copy
  // is another change, listed with --all.
  REQUIRE(run_cli("diff --db " + db + " 1 3", out, err) == 0);
  const auto changes = by_key(slurp(out));
  CHECK(changes.size() == 12);
  for (int i = 20; i < 30; ++i) CHECK(changes.at("t" + std::to_string(i))["change"] == "added");
  CHECK(changes.at("t2")["change"] == "removed");
  CHECK(changes.at("t2")["before"]["status"] == "accepted");
  CHECK(changes.at("t1")["change"] == "relabelled");
  CHECK(changes.at("t1")["before"]["label"] == "odd");
  CHECK(changes.at("t1")["after"]["label"] == "even");
  CHECK(changes.count("tc3") == 0);
  CHECK_THAT(slurp(err), Catch::Contains("10 added, 1 removed, 1 relabelled, 1 other"));
  REQUIRE(run_cli("diff --all --db " + db + " 1 3", out, err) == 0);
  CHECK(by_key(slurp(out)).at("tc3")["change"] == "changed");

  // Revisions that do not exist, or in the wrong order: a clear error.
  CHECK(run_cli("export --db " + db + " --revision 4", out, err) != 0);
  CHECK_THAT(slurp(err), Catch::Contains("--revision 4") && Catch::Contains("at revision 3"));
  CHECK(run_cli("diff --db " + db + " 3 1", out, err) != 0);
  CHECK_THAT(slurp(err), Catch::Contains("the earlier first"));
}
