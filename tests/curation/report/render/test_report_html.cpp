// The HTML page of the quality report, on the fixture report: self-contained,
// charts whose elements follow the data, escaped user strings, "n/a" with
// notes, and errors that name a missing or mistyped key.
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "report_fixture.h"
#include "winnow/curation/report/report_render.h"
#include "winnow/error.h"

namespace winnow::curation {
namespace {

using test::between;
using test::fixture_report;
using test::occurrences;

// The message of the winnow::Error that rendering `report` throws.
std::string render_error(const nlohmann::json& report) {
  try {
    report::render_report_html(report);
  } catch (const winnow::Error& error) {
    return error.what();
  }
  FAIL("rendering did not throw");
  return "";
}

TEST_CASE("html: the page is self-contained", "[html]") {
  const std::string html = report::render_report_html(fixture_report());
  REQUIRE(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("</html>") != std::string::npos);
  for (const char* external :
       {"http://", "https://", "src=", "<script", "<link", "@import", "url(", "@font-face"}) {
    INFO(external);
    CHECK(html.find(external) == std::string::npos);
  }
  CHECK(occurrences(html, "<style>") == 1);
}

TEST_CASE("html: the three charts are inline SVG with one element per datum", "[html]") {
  const nlohmann::json report = fixture_report();
  const std::string html = report::render_report_html(report);

  const std::string growth = between(html, "<svg id=\"chart-growth\"", "</svg>");
  CHECK(occurrences(growth, "class=\"growth-bar\"") == report["batches"].size());
  std::size_t non_zero_segments = 0;
  for (const auto& batch : report["batches"]) {
    for (const auto& [status, count] : batch["cumulative"].items()) {
      non_zero_segments += status != "total" && count.get<int>() > 0 ? 1 : 0;
    }
  }
  CHECK(non_zero_segments >= 6 * 5 - 1);  // the fixture uses every status
  CHECK(occurrences(growth, "class=\"growth-segment\"") == non_zero_segments);

  const std::string sources = between(html, "<svg id=\"chart-sources\"", "</svg>");
  std::size_t with_accuracy = 0;
  for (const auto& source : report["sources"]) {
    with_accuracy += source["estimated_accuracy"].is_null() ? 0 : 1;
  }
  REQUIRE(with_accuracy == 4);  // and one source without annotations
  CHECK(occurrences(sources, "class=\"source-row\"") == report["sources"].size());
  CHECK(occurrences(sources, "class=\"source-bar\"") == with_accuracy);
  CHECK(occurrences(sources, "class=\"source-interval\"") == with_accuracy);
  CHECK(sources.find("n/a: no annotations from this source") != std::string::npos);

  const std::string confusion = between(html, "<svg id=\"chart-confusion\"", "</svg>");
  CHECK(occurrences(confusion, "class=\"confusion-cell\"") == 10 * 10);
}

TEST_CASE("html: bars follow the data, worst source first", "[html]") {
  nlohmann::json report = fixture_report();
  report["batches"].erase(report["batches"].begin() + 3, report["batches"].end());
  report["sources"].erase(report["sources"].begin() + 1);
  const std::string html = report::render_report_html(report);
  CHECK(occurrences(html, "class=\"growth-bar\"") == 3);
  CHECK(occurrences(html, "class=\"source-bar\"") == 3);

  // A bar's width is its accuracy: 0.4377 of the 810-unit axis.
  const std::string first_bar = between(html, "<rect class=\"source-bar\"", "</rect>");
  CHECK(first_bar.find("width=\"354.5\"") != std::string::npos);
  CHECK(first_bar.find("estimated accuracy 43.8%, 95% interval 42.1–45.5%") != std::string::npos);
}

TEST_CASE("html: an empty store and a long history still render", "[html]") {
  nlohmann::json empty = fixture_report();
  for (const char* list : {"sources", "classes", "confused_pairs", "batches"}) {
    empty[list] = nlohmann::json::array();
  }
  empty["dataset"]["class_distribution"] = nlohmann::json::object();
  empty["dataset"]["class_confusion"] = {{"class_names", nlohmann::json::array()},
                                         {"counts", nlohmann::json::array()}};
  empty["dataset"]["dawid_skene"] = nullptr;
  empty["dataset"]["dawid_skene_note"] = "no annotations";
  const std::string html = report::render_report_html(empty);
  CHECK(html.find("id=\"chart-growth\"") != std::string::npos);
  CHECK(html.find("no ingest batches yet") != std::string::npos);
  CHECK(html.find("no sources or annotators yet") != std::string::npos);
  CHECK(html.find("no judged labelled samples yet") != std::string::npos);
  CHECK(occurrences(html, "class=\"empty\">none</td>") == 5);  // the five list tables
  CHECK(html.find("n/a</span> <span class=\"note\">no annotations</span>") != std::string::npos);

  // 60 batches: one bar each, every third one labelled, no file names.
  nlohmann::json history = fixture_report();
  const nlohmann::json batch = history["batches"][0];
  history["batches"] = nlohmann::json::array();
  for (int id = 1; id <= 60; ++id) {
    history["batches"].push_back(batch);
    history["batches"].back()["id"] = id;
  }
  const std::string long_html = report::render_report_html(history);
  const std::string growth = between(long_html, "<svg id=\"chart-growth\"", "</svg>");
  CHECK(occurrences(growth, "class=\"growth-bar\"") == 60);
  CHECK(occurrences(growth, "<text class=\"axis\" x=") == 5 /* y ticks: 0 to 2,000 */ + 20);
  CHECK(growth.find("fashion-01.jsonl</text>") == std::string::npos);
}

TEST_CASE("html: strings from the report are escaped", "[html]") {
  const std::string html = report::render_report_html(fixture_report());
  CHECK(html.find(test::kHostileName) == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  // In the sources table and the chart's hover title, whole and escaped.
  CHECK(occurrences(html,
                    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; | Acme &amp; "
                    "&quot;Sons&quot;") >= 3);

  nlohmann::json report = fixture_report();
  report["batches"][0]["file"] = "a\"b'<img onerror=x>.jsonl";
  report["classes"][0]["class"] = "</table><b>";
  const std::string edited = report::render_report_html(report);
  CHECK(edited.find("<img") == std::string::npos);
  CHECK(edited.find("</table><b>") == std::string::npos);
  CHECK(edited.find("a&quot;b&#39;&lt;img onerror=x&gt;.jsonl") != std::string::npos);
}

TEST_CASE("html: the tables hold every row, and null statistics show n/a with their note",
          "[html]") {
  const nlohmann::json report = fixture_report();
  const std::string html = report::render_report_html(report);
  const std::regex body_row("<tr><th");
  auto rows_of = [&](const std::string& id) {
    const std::string table = between(html, "<table id=\"" + id + "\"", "</table>");
    const std::string body = between(table, "<tbody>", "</tbody>");
    return static_cast<std::size_t>(std::distance(
        std::sregex_iterator(body.begin(), body.end(), body_row), std::sregex_iterator()));
  };
  CHECK(rows_of("table-sources") == report["sources"].size());
  CHECK(rows_of("table-classes") == report["classes"].size());
  CHECK(rows_of("table-confused-pairs") == report["confused_pairs"].size());
  CHECK(rows_of("table-batches") == report["batches"].size());
  CHECK(rows_of("table-class-distribution") == 10);

  // Fleiss' kappa is null in the fixture: its note is shown, not a number.
  const std::string fleiss_note = report["dataset"]["fleiss_kappa_note"];
  CHECK(occurrences(html, fleiss_note) >= 2);  // headline card and dataset table
  CHECK(html.find("<span class=\"na\">n/a</span>") != std::string::npos);
  CHECK(html.find("no sample of this class has a stored label-quality score") != std::string::npos);
  const std::string fleiss_card = between(html, "Fleiss&#39; κ</div>", "</div></div>");
  CHECK(fleiss_card.find("<span class=\"na\">n/a</span>") != std::string::npos);

  // The sources table keeps the JSON's worst-first order.
  const std::string sources = between(html, "<table id=\"table-sources\"", "</table>");
  CHECK(sources.find("&lt;script&gt;") < sources.find("crowd-pool-7"));
  CHECK(sources.find("crowd-pool-7") < sources.find("vendor-a"));
  CHECK(sources.find("vendor-a") < sources.find("web-scrape"));
  // One confusion matrix per source that has one.
  CHECK(occurrences(html, "<details class=\"matrix\">") == 4);
  // Column meanings come from the schema.
  CHECK(html.find("title=\"Dawid-Skene expected accuracy Σ_c p[c]·e[c,c], as the last") !=
        std::string::npos);
}

TEST_CASE("html: a missing or mistyped key is an error naming it", "[html][errors]") {
  nlohmann::json report = fixture_report();
  report["dataset"].erase("health_score");
  CHECK_THAT(render_error(report), Catch::Contains("'dataset.health_score' is missing"));

  report = fixture_report();
  report.erase("batches");
  CHECK_THAT(render_error(report), Catch::Contains("'batches' is missing"));

  report = fixture_report();
  report["sources"][2]["labels"] = "many";
  CHECK_THAT(render_error(report),
             Catch::Contains("'sources[2].labels' must be an integer, got string"));

  report = fixture_report();
  report["batches"][4]["cumulative"].erase("rejected");
  CHECK_THAT(render_error(report), Catch::Contains("'batches[4].cumulative.rejected' is missing"));

  report = fixture_report();
  report["sources"][0]["confusion"].erase(3);
  CHECK_THAT(render_error(report),
             Catch::Contains("'sources[0].confusion' must have 10 rows (one per class), got 9"));

  report = fixture_report();
  report["dataset"]["class_confusion"]["counts"][1][2] = "7";
  CHECK_THAT(render_error(report),
             Catch::Contains("'dataset.class_confusion.counts[1][2]' must be a number"));

  report = fixture_report();
  report["schema_version"] = 2;
  CHECK_THAT(render_error(report), Catch::Contains("this renderer reads version 1"));

  CHECK_THAT(render_error(nlohmann::json::array()), Catch::Contains("must be an object"));
}

}  // namespace
}  // namespace winnow::curation
