// The Markdown summary of the quality report, on the fixture report: the
// same tables as the HTML page, intact however the names are spelled.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "report_fixture.h"
#include "winnow/curation/report/report_render.h"
#include "winnow/error.h"

namespace winnow::curation {
namespace {

using test::between;
using test::fixture_report;
using test::occurrences;

// Column separators of a table line: '|' not escaped by a backslash.
std::size_t separators(const std::string& line) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    count += line[i] == '|' && (i == 0 || line[i - 1] != '\\') ? 1 : 0;
  }
  return count;
}

// The table lines (header, rule, rows) under the heading `heading`.
std::vector<std::string> table_under(const std::string& markdown, const std::string& heading) {
  std::istringstream in(markdown.substr(markdown.find(heading + "\n")));
  std::vector<std::string> lines;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) == 0) {
      inside = true;
      lines.push_back(line);
    } else if (inside) {
      break;
    }
  }
  return lines;
}

TEST_CASE("markdown: every table of the page, with one row per entry", "[markdown]") {
  const nlohmann::json report = fixture_report();
  const std::string markdown = report::render_report_markdown(report);
  REQUIRE(markdown.rfind("# Annotation quality report\n", 0) == 0);

  const std::vector<std::pair<std::string, std::size_t>> tables = {
      {"## Sources", report["sources"].size()},
      {"## Classes", report["classes"].size()},
      {"## Most confused class pairs", report["confused_pairs"].size()},
      {"## Ingest batches", report["batches"].size()},
      {"## Class distribution", 10},
      {"## Class confusion", 10},
      {"### Confusion matrix of vendor-a", 10},
  };
  for (const auto& [heading, rows] : tables) {
    INFO(heading);
    const std::vector<std::string> lines = table_under(markdown, heading);
    REQUIRE(lines.size() == rows + 2);  // header and rule
    CHECK(lines[1].find("---") != std::string::npos);
    for (const std::string& line : lines) {
      INFO(line);
      CHECK(separators(line) == separators(lines[0]));
    }
  }
  CHECK(occurrences(markdown, "### Confusion matrix of") == 4);  // not for web-scrape
  CHECK(table_under(markdown, "## Sources")[0] ==
        "| Source | Kind | Submitted | Labels | Est. accuracy | 95% interval | Agreement | "
        "Cohen's κ | Label issues | Duplicates |");
  // Column legends repeat the schema's definitions.
  CHECK(markdown.find(
            "- **Est. accuracy**: Dawid-Skene expected accuracy Σ\\_c p\\[c\\]·e\\[c,c\\]") !=
        std::string::npos);
}

TEST_CASE("markdown: names are escaped and null statistics carry their note", "[markdown]") {
  const nlohmann::json report = fixture_report();
  const std::string markdown = report::render_report_markdown(report);
  // Every '<' is escaped, so no name can open an HTML tag on GitHub.
  for (std::size_t at = markdown.find('<'); at != std::string::npos;
       at = markdown.find('<', at + 1)) {
    INFO(markdown.substr(at, 20));
    CHECK((at > 0 && markdown[at - 1] == '\\'));
  }
  const std::string hostile_row =
      "| \\<script\\>alert(\"x\")\\</script\\> \\| Acme \\& \"Sons\" | annotator | 0 | 3,249 | "
      "43.8% | 42.1–45.5% |";
  CHECK(markdown.find(hostile_row) != std::string::npos);

  const std::string fleiss = between(markdown, "| Fleiss' κ |", "\n");
  CHECK(fleiss.find("n/a (the multiply-annotated samples have unequal numbers of annotations "
                    "(2 to 3))") != std::string::npos);
  const std::string web_scrape = between(markdown, "| web-scrape |", "\n");
  CHECK(web_scrape.find("n/a (no annotations from this source; Dawid-Skene rates annotators "
                        "only)") != std::string::npos);
  const std::string running = between(markdown, "| 6 | incoming/fashion-06.jsonl |", "\n");
  CHECK(running.find("n/a (the batch has not finished)") != std::string::npos);
}

TEST_CASE("markdown: the training section, when the report has one", "[markdown]") {
  nlohmann::json report = fixture_report();
  CHECK(report::render_report_markdown(report).find("## What training found") == std::string::npos);
  report["training"] = {
      {"runs", {"r1"}},
      {"samples", 120},
      {"threshold", 2.302585},
      {"classes",
       {{{"class", "Coat"},
         {"samples", 70},
         {"mean_loss", 1.25},
         {"above_threshold", 9},
         {"hardest", {{{"key", "<k1>"}, {"mean_loss", 6.5}}, {{"key", "k2"}, {"mean_loss", 6.0}}}}},
        {{"class", "Bag"},
         {"samples", 50},
         {"mean_loss", 0.5},
         {"above_threshold", 1},
         {"hardest", nlohmann::json::array()}}}}};
  const std::string markdown = report::render_report_markdown(report);
  const std::vector<std::string> lines = table_under(markdown, "## What training found, per class");
  REQUIRE(lines.size() == 4);
  CHECK(lines[2] == "| Coat | 70 | 1.250 | 9 | \\<k1\\>, k2 |");
  CHECK(lines[3] == "| Bag | 50 | 0.500 | 1 |  |");
  CHECK(markdown.find("above 2.303") != std::string::npos);
}

TEST_CASE("markdown: a missing key is an error naming it", "[markdown][errors]") {
  nlohmann::json report = fixture_report();
  report["classes"][3].erase("inverse_label_noise");
  try {
    report::render_report_markdown(report);
    FAIL("rendering did not throw");
  } catch (const winnow::Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("'classes[3].inverse_label_noise' is missing"));
  }
}

}  // namespace
}  // namespace winnow::curation
