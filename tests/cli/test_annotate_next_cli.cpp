// winnow annotate-next: tasks on one scale (unsure consensus first), the pool's
// costs and capacities respected, never an annotator twice on an item, the
// same output for the same store, bad pools refused by line, and the loop
// through Label Studio's formats: tasks out, its JSON export back in.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using nlohmann::json;
using winnow::test::run_cli;
using winnow::test::slurp;

namespace {

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// 40 items: alice and bob (reliable) agree on 30; on 10 they disagree; carol
// (a spammer) answered some of each. Returns the database.
std::string campaign_db(const winnow::curation::test::ScratchDir& dir) {
  const std::string db = dir.file("c.db"), out = dir.file("out.txt");
  std::string votes = "item,annotator,label\n";
  for (int i = 0; i < 40; ++i) {
    const std::string item = "item" + std::to_string(100 + i);
    const char* truth = i % 2 == 0 ? "cat" : "dog";
    const char* other = i % 2 == 0 ? "dog" : "cat";
    votes += item + ",alice," + truth + "\n";
    votes += item + ",bob," + (i < 30 ? truth : other) + "\n";
    if (i % 3 == 0) votes += item + ",carol," + (i % 6 == 0 ? other : truth) + "\n";
  }
  std::ofstream(dir.file("votes.csv")) << votes;
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("import-annotations --db " + db + " " + dir.file("votes.csv"), out) == 0);
  return db;
}

}  // namespace

TEST_CASE("annotate-next: unsure items first, the pool's limits kept, deterministic",
          "[cli][annotate]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = campaign_db(dir);
  const std::string out = dir.file("tasks.csv"), err = dir.file("err.txt");
  std::ofstream(dir.file("pool.csv"))
      << "annotator,cost,capacity\nalice,1,4\nbob,1,\ncarol,0.2,3\ndave,0.5,2\n";
  REQUIRE(run_cli("annotate-next --db " + db + " --budget 12 --annotators " + dir.file("pool.csv"),
                  out, err) == 0);
  const std::string first = slurp(out);
  const auto rows = csv_rows(first);
  REQUIRE(rows.size() >= 2);
  CHECK(rows[0] == std::vector<std::string>{"item", "annotator", "reason", "score"});
  std::map<std::string, int> per_annotator;
  std::set<std::string> items;
  double last = 1e9;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const std::string& item = rows[r][0];
    const std::string& who = rows[r][1];
    CHECK(items.insert(item).second);  // one task per item
    ++per_annotator[who];
    // alice and bob answered every item already; carol answered every third.
    CHECK((who == "dave" || who == "carol"));
    if (who == "carol") CHECK((std::stoi(item.substr(4)) - 100) % 3 != 0);
    const double score = std::stod(rows[r][3]);
    CHECK(score <= last);
    last = score;
  }
  CHECK(per_annotator["dave"] == 2);  // their capacities: 5 tasks of the 12 asked
  CHECK(per_annotator["carol"] == 3);
  CHECK(rows.size() - 1 == 5);
  // Without a pool: items only, and the five carol disputed against alice
  // and bob (every sixth) first: the least settled consensus.
  REQUIRE(run_cli("annotate-next --db " + db + " --budget 10", out, err) == 0);
  const auto plain = csv_rows(slurp(out));
  REQUIRE(plain.size() >= 6);
  REQUIRE(plain.size() <= 11);
  for (std::size_t r = 1; r < plain.size(); ++r) {
    CHECK(plain[r][1].empty());
    if (r <= 5) CHECK((std::stoi(plain[r][0].substr(4)) - 100) % 6 == 0);
  }
  // The same request again gives the same tasks.
  REQUIRE(run_cli("annotate-next --db " + db + " --budget 12 --annotators " + dir.file("pool.csv"),
                  out, err) == 0);
  CHECK(slurp(out) == first);

  // A model's predictions vote too (siding with alice): the plan changes.
  std::string probs = "{\"classes\": [\"cat\", \"dog\"]}\n";
  for (int i = 0; i < 40; ++i) {
    probs += "{\"key\": \"item" + std::to_string(100 + i) +
             "\", \"pred_probs\": " + (i % 2 == 0 ? "[0.9, 0.1]" : "[0.1, 0.9]") + "}\n";
  }
  std::ofstream(dir.file("probs.jsonl")) << probs;
  REQUIRE(
      run_cli("annotate-next --db " + db + " --budget 40 --pred-probs " + dir.file("probs.jsonl"),
              out, err) == 0);
  const auto with_model = csv_rows(slurp(out));
  REQUIRE(run_cli("annotate-next --db " + db + " --budget 40", out, err) == 0);
  const auto without_model = csv_rows(slurp(out));
  CHECK(with_model.size() >= 1);
  CHECK(with_model != without_model);
  std::ofstream(dir.file("bad-probs.jsonl")) << "{\"key\": \"item100\", \"pred_probs\": [2, -1]}\n";
  CHECK(run_cli(
            "annotate-next --db " + db + " --budget 3 --pred-probs " + dir.file("bad-probs.jsonl"),
            out, err) == 1);
  CHECK_THAT(slurp(err), Catch::Contains("bad-probs.jsonl"));

  // A bad pool is refused by line.
  std::ofstream(dir.file("bad.csv")) << "annotator,cost\nx,1\ny,-2\n";
  CHECK(run_cli("annotate-next --db " + db + " --budget 3 --annotators " + dir.file("bad.csv"), out,
                err) == 1);
  CHECK_THAT(slurp(err), Catch::Contains("bad.csv: line 3: cost '-2' is not a positive number"));
}

TEST_CASE("annotate-next: tasks through Label Studio's formats and back", "[cli][annotate]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = campaign_db(dir);
  const std::string out = dir.file("tasks.json"), err = dir.file("err.txt");
  REQUIRE(run_cli("annotate-next --db " + db + " --budget 5 --format label-studio", out, err) == 0);
  json tasks = json::parse(slurp(out));
  REQUIRE(tasks.size() == 5);
  // Label Studio imports them, gives each an id and, once annotated, exports
  // them with the annotations.
  int id = 9000;
  for (json& task : tasks) {
    REQUIRE(task["data"]["item"].is_string());
    task["id"] = id++;
    task["annotations"] =
        json::array({{{"completed_by", 7},
                      {"result", {{{"type", "choices"}, {"value", {{"choices", {"cat"}}}}}}}}});
  }
  std::ofstream(dir.file("export.json")) << tasks.dump();
  REQUIRE(run_cli("import-annotations --json --db " + db + " " + dir.file("export.json"), out,
                  err) == 0);
  const json r = json::parse(slurp(out));
  CHECK(r["counts"]["total"] == 0);  // no new samples: the answers joined their items
  CHECK(r["annotation_rounds"]["added"] == 5);
}
