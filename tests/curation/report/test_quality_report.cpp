// The quality report over real SQLite stores: a hand-made store whose every
// figure is counted by hand, degenerate stores, an end-to-end ingest through
// winnow::test::Pipeline, and `winnow report`'s outputs and exit codes.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/curation/labels/agreement.h"
#include "winnow/curation/report/quality_report.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using namespace winnow::curation::labels;
using namespace winnow::curation::report;
using nlohmann::json;

namespace {

// Every number is finite and every null statistic has its `*_note` (except
// the few keys the schema allows to be plainly null).
void check_well_formed(const json& j, const std::string& path = "") {
  static const std::set<std::string> plain_nulls = {"finished_at", "fleiss_kappa_raters"};
  if (j.is_number_float()) {
    INFO(path);
    CHECK(std::isfinite(j.get<double>()));
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (value.is_null() && plain_nulls.count(key) == 0) {
        INFO(path << "." << key << " is null");
        CHECK(j.contains(key + "_note"));
      }
      check_well_formed(value, path + "." + key);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      check_well_formed(j[i], path + "[" + std::to_string(i) + "]");
    }
  }
}

const json& source_named(const json& report, const std::string& name) {
  for (const json& s : report["sources"]) {
    if (s["name"] == name) return s;
  }
  FAIL("no source named " << name);
  static const json none;
  return none;
}

const json& class_named(const json& report, const std::string& name) {
  for (const json& c : report["classes"]) {
    if (c["class"] == name) return c;
  }
  FAIL("no class named " << name);
  static const json none;
  return none;
}

NewSample sample(const std::string& key, std::optional<std::int64_t> label,
                 const std::string& source, std::optional<std::int64_t> batch = std::nullopt) {
  NewSample s;
  s.external_key = key;
  s.content_hash = "hash-" + key;
  s.label = label;
  s.source = source;
  s.batch_id = batch;
  return s;
}

// Named labels as the pipeline stores them (negative ids in meta).
constexpr std::int64_t kCat = -1, kDog = -2, kBird = -3;

std::int64_t next_class(std::int64_t label) {
  return label == kBird ? kCat : label - 1;
}

// 40 annotated items (truth cycles cat, dog, bird; the record label of every
// tenth is the next class; annotators A and B are always right, C only on
// even items), then 5 unannotated samples from "scraper" and "A".
void fill_hand_made_store(MetadataStore& store) {
  store.set_meta("curation.label_names", R"({"cat": -1, "dog": -2, "bird": -3})");
  const std::int64_t classes[3] = {kCat, kDog, kBird};
  BatchRecord first = store.start_batch(store.register_batch("first.jsonl", "c1").id);
  std::vector<NewSample> items;
  for (int i = 0; i < 40; ++i) {
    const std::int64_t truth = classes[i % 3];
    NewSample s = sample("item" + std::to_string(i), i % 10 == 0 ? next_class(truth) : truth,
                         "vendor", first.id);
    s.annotations = {{"A", truth}, {"B", truth}, {"C", i % 2 == 0 ? truth : next_class(truth)}};
    items.push_back(s);
  }
  const std::vector<std::int64_t> ids = store.insert_samples(items);
  store.finish_batch(first.id);

  BatchRecord second = store.start_batch(store.register_batch("second.jsonl", "c2").id);
  NewSample flagged = sample("x1", kBird, "scraper", second.id);
  flagged.decision = {SampleStatus::label_issue, std::nullopt, "label quality 0.05",
                      R"({"label_quality": {"quality": 0.05, "suggested_label": "cat"}})"};
  NewSample original = sample("x2", kBird, "scraper", second.id);
  const std::int64_t original_id = store.insert_samples({flagged, original})[1];
  NewSample copy = sample("x3", kBird, "scraper", second.id);
  copy.decision = {SampleStatus::duplicate_exact, original_id, "same content", ""};
  NewSample rejected = sample("x4", std::nullopt, "scraper", second.id);
  rejected.decision = {SampleStatus::rejected, std::nullopt, "bad record", ""};
  NewSample from_a = sample("x5", kCat, "A", second.id);
  store.insert_samples({copy, rejected, from_a});
  store.finish_batch(second.id);
  REQUIRE(ids.size() == 40);
}

struct Run {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Run run_cli(const winnow::test::TempDir& dir, const std::string& args) {
  const std::string out = dir.file("cli.out");
  const std::string err = dir.file("cli.err");
  const std::string cmd = std::string(WINNOW_CLI_PATH) + " " + args + " > " + out + " 2> " + err;
  const int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

}  // namespace

TEST_CASE("quality report: every figure of a hand-made store", "[quality_report]") {
  winnow::test::TempDir dir;
  MetadataStore store(dir.file("hand.db"));
  fill_hand_made_store(store);
  QualityReportOptions options;
  options.generated_at = "2026-11-09T14:03:12Z";
  std::ostringstream per_sample;
  options.sample_export = &per_sample;
  const json r = build_quality_report(store, options);
  check_well_formed(r);

  CHECK(r["schema_version"] == 1);
  CHECK(r["generated_at"] == "2026-11-09T14:03:12Z");
  CHECK(r["winnow_version"].is_string());
  CHECK(r["database"] == dir.file("hand.db"));

  const json& d = r["dataset"];
  CHECK(d["samples"] == 45);
  CHECK(d["by_status"] == json({{"accepted", 42},
                                {"duplicate_exact", 1},
                                {"duplicate_near", 0},
                                {"label_issue", 1},
                                {"rejected", 1}}));
  CHECK(d["duplicate_rate"].get<double>() == Approx(1.0 / 44.0));
  CHECK(d["labelled_samples"] == 43);
  CHECK(d["label_issue_rate"].get<double>() == Approx(1.0 / 43.0));
  CHECK(d["annotations"] == 120);
  CHECK(d["annotated_samples"] == 40);
  CHECK(d["multiply_annotated_samples"] == 40);
  CHECK(d["class_distribution"] == json({{"bird", 15}, {"cat", 14}, {"dog", 14}}));
  // Label issues of the class table: items 0, 10, 20, 30 and x1 (bird, suggested cat).
  CHECK(d["health_score"].get<double>() == Approx(1.0 - 5.0 / 43.0));
  CHECK(d["class_confusion"]["class_names"] == json({"bird", "cat", "dog"}));
  CHECK(d["class_confusion"]["counts"] == json({{13, 1, 1}, {1, 13, 0}, {0, 2, 12}}));

  // Agreement over the 40 items: the same units through agreement.h.
  LabelledUnits units;
  for (int i = 0; i < 40; ++i) {
    const int truth = i % 3;
    units.add_unit({truth, truth, i % 2 == 0 ? truth : (truth + 1) % 3});
  }
  CHECK(d["krippendorff_alpha"].get<double>() == Approx(*krippendorff_alpha_nominal(units).value));
  CHECK(d["krippendorff_alpha_samples"] == 40);
  CHECK(d["fleiss_kappa"].get<double>() == Approx(*fleiss_kappa(units).value));
  CHECK(d["fleiss_kappa_samples"] == 40);
  CHECK(d["fleiss_kappa_raters"] == 3);
  CHECK(d["dawid_skene"]["items"] == 40);
  CHECK(d["dawid_skene"]["classes"] == 3);
  CHECK(d["dawid_skene"]["converged"] == true);
  CHECK(d["consensus_vs_majority"].get<double>() == Approx(0.0));

  // Sources: C is the worst, the two submit-only sources (unrated) last.
  const json& sources = r["sources"];
  REQUIRE(sources.size() == 5);
  CHECK(sources[0]["name"] == "C");
  CHECK(sources[3]["name"] == "scraper");
  CHECK(sources[4]["name"] == "vendor");
  const json& c = source_named(r, "C");
  CHECK(c["kind"] == "annotator");
  CHECK(c["labels"] == 40);
  CHECK(c["submitted"] == 0);
  CHECK(c["estimated_accuracy"].get<double>() == Approx(0.5).margin(0.05));
  CHECK(c["accuracy_interval"][0].get<double>() < c["estimated_accuracy"].get<double>());
  CHECK(c["accuracy_interval"][1].get<double>() > c["estimated_accuracy"].get<double>());
  CHECK(c["agreement_with_consensus"].get<double>() == Approx(0.5));
  CHECK(c["cohen_kappa"].get<double>() > 0.0);
  CHECK(c["cohen_kappa"].get<double>() < 0.5);
  CHECK(c["duplicate_share"].is_null());
  CHECK(c["class_names"] == json({"bird", "cat", "dog"}));
  REQUIRE(c["confusion"].size() == 3);
  // C answers "next class" (bird -> cat) on half of the bird items.
  CHECK(c["confusion"][0][1].get<double>() == Approx(0.5).margin(0.1));
  const json& a = source_named(r, "A");
  CHECK(a["kind"] == "both");
  CHECK(a["submitted"] == 1);
  CHECK(a["estimated_accuracy"].get<double>() > 0.95);
  CHECK(a["agreement_with_consensus"].get<double>() == Approx(1.0));
  CHECK(a["cohen_kappa"].get<double>() == Approx(1.0));
  CHECK(a["label_issue_share"].get<double>() == Approx(0.0));
  CHECK(a["duplicate_share"].get<double>() == Approx(0.0));
  const json& vendor = source_named(r, "vendor");
  CHECK(vendor["kind"] == "source");
  CHECK(vendor["submitted"] == 40);
  CHECK(vendor["labels"] == 40);
  CHECK(vendor["estimated_accuracy"].is_null());
  CHECK(vendor["confusion"].is_null());
  CHECK(vendor["agreement_with_consensus"].get<double>() == Approx(0.9));
  CHECK(vendor["label_issue_share"].get<double>() == Approx(0.0));
  const json& scraper = source_named(r, "scraper");
  CHECK(scraper["submitted"] == 4);
  CHECK(scraper["labels"] == 2);  // x1 and x2 were judged
  CHECK(scraper["agreement_with_consensus"].get<double>() == Approx(0.5));
  CHECK(scraper["label_issue_share"].get<double>() == Approx(0.5));
  CHECK(scraper["duplicate_share"].get<double>() == Approx(0.25));

  // Classes, worst label quality first.
  const json& classes = r["classes"];
  REQUIRE(classes.size() == 3);
  CHECK(classes[0]["class"] == "dog");
  CHECK(classes[1]["class"] == "bird");
  CHECK(classes[2]["class"] == "cat");
  const json& cat = class_named(r, "cat");
  CHECK(cat["given"] == 14);
  CHECK(cat["label_issues"] == 1);
  CHECK(cat["inverse_label_issues"] == 3);
  CHECK(cat["label_noise"].get<double>() == Approx(1.0 / 14.0));
  CHECK(cat["inverse_label_noise"].get<double>() == Approx(3.0 / 16.0));
  CHECK(cat["label_quality_score"].get<double>() == Approx(13.0 / 14.0));
  CHECK(cat["mean_label_quality"].is_null());
  const json& dog = class_named(r, "dog");
  CHECK(dog["label_issues"] == 2);
  CHECK(dog["inverse_label_issues"] == 1);
  const json& bird = class_named(r, "bird");
  CHECK(bird["given"] == 15);
  CHECK(bird["label_issues"] == 2);
  CHECK(bird["inverse_label_issues"] == 1);

  const json& pairs = r["confused_pairs"];
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[0] == json({{"a", "bird"},
                          {"b", "cat"},
                          {"count", 2},
                          {"joint_probability", pairs[0]["joint_probability"]}}));
  CHECK(pairs[0]["joint_probability"].get<double>() == Approx(2.0 / 43.0));
  CHECK(pairs[1]["a"] == "cat");
  CHECK(pairs[1]["b"] == "dog");
  CHECK(pairs[1]["count"] == 2);
  CHECK(pairs[2]["a"] == "bird");
  CHECK(pairs[2]["b"] == "dog");
  CHECK(pairs[2]["count"] == 1);

  const json& batches = r["batches"];
  REQUIRE(batches.size() == 2);
  CHECK(batches[0]["file"] == "first.jsonl");
  CHECK(batches[0]["state"] == "done");
  CHECK(batches[0]["attempts"] == 1);
  CHECK(batches[0]["counts"]["accepted"] == 40);
  CHECK(batches[0]["counts"]["total"] == 40);
  CHECK(batches[1]["counts"]["total"] == 5);
  CHECK(batches[1]["counts"]["rejected"] == 1);
  CHECK(batches[1]["cumulative"]["total"] == 45);
  CHECK(batches[1]["cumulative"]["accepted"] == 42);
  CHECK(batches[1]["finished_at"].is_string());

  // Per-sample export: every sample with a label or annotations (not x4).
  const std::vector<json> lines = json_lines(per_sample.str());
  REQUIRE(lines.size() == 44);
  CHECK(lines[0]["key"] == "item0");
  CHECK(lines[0]["status"] == "accepted");
  CHECK(lines[0]["given_label"] == "dog");
  CHECK(lines[0]["consensus_label"] == "cat");
  CHECK(lines[0]["consensus_quality"].get<double>() > 0.9);
  CHECK(lines[0]["annotations"] == json({{"A", "cat"}, {"B", "cat"}, {"C", "cat"}}));
  CHECK(lines[1]["annotations"]["C"] == "bird");  // item 1: dog, C says the next class
  CHECK(lines[40]["key"] == "x1");
  CHECK(lines[40]["consensus_label"].is_null());
  CHECK(lines[40]["annotations"].empty());

  // write_sample_export gives the same lines.
  std::ostringstream again;
  write_sample_export(store, again);
  CHECK(again.str() == per_sample.str());
}

TEST_CASE("quality report: degenerate stores get notes, not NaN or a crash", "[quality_report]") {
  winnow::test::TempDir dir;

  SECTION("empty store") {
    MetadataStore store(dir.file("empty.db"));
    const json r = build_quality_report(store);
    check_well_formed(r);
    const json& d = r["dataset"];
    CHECK(d["samples"] == 0);
    CHECK(d["duplicate_rate"].is_null());
    CHECK(d["label_issue_rate"].is_null());
    CHECK(d["health_score"].is_null());
    CHECK(d["krippendorff_alpha"].is_null());
    CHECK(d["krippendorff_alpha_note"] == "no sample has two or more annotations");
    CHECK(d["fleiss_kappa"].is_null());
    CHECK(d["dawid_skene"].is_null());
    CHECK(d["dawid_skene_note"] == "no annotations");
    CHECK(d["consensus_vs_majority"].is_null());
    CHECK(r["sources"].empty());
    CHECK(r["classes"].empty());
    CHECK(r["confused_pairs"].empty());
    CHECK(r["batches"].empty());
  }

  SECTION("labels but no annotations") {
    MetadataStore store(dir.file("plain.db"));
    store.insert_samples({sample("a", 1, "s"), sample("b", 2, "s")});
    const json r = build_quality_report(store);
    check_well_formed(r);
    CHECK(r["dataset"]["health_score"].get<double>() == Approx(1.0));
    CHECK(r["dataset"]["dawid_skene"].is_null());
    REQUIRE(r["sources"].size() == 1);
    CHECK(r["sources"][0]["kind"] == "source");
    CHECK(r["sources"][0]["estimated_accuracy"].is_null());
  }

  SECTION("one annotator") {
    MetadataStore store(dir.file("solo.db"));
    std::vector<NewSample> samples;
    for (int i = 0; i < 6; ++i) {
      NewSample s = sample("s" + std::to_string(i), i % 2, "");
      s.annotations = {{"solo", i % 2}, {"solo", (i / 2) % 2}};  // two rounds each
      samples.push_back(s);
    }
    store.insert_samples(samples);
    const json r = build_quality_report(store);
    check_well_formed(r);
    const json& solo = source_named(r, "solo");
    CHECK(solo["estimated_accuracy"].is_null());
    CHECK(solo["estimated_accuracy_note"].get<std::string>().find("only one annotator") !=
          std::string::npos);
    CHECK(r["dataset"]["dawid_skene"]["annotators"] == 1);
    CHECK(source_named(r, "(unknown)")["submitted"] == 6);
  }

  SECTION("single annotations only") {
    MetadataStore store(dir.file("single.db"));
    NewSample a = sample("a", 1, "s");
    a.annotations = {{"x", 1}};
    NewSample b = sample("b", 2, "s");
    b.annotations = {{"y", 2}};
    store.insert_samples({a, b});
    const json r = build_quality_report(store);
    check_well_formed(r);
    CHECK(r["dataset"]["krippendorff_alpha"].is_null());
    CHECK(r["dataset"]["consensus_vs_majority"].is_null());
    CHECK(source_named(r, "x")["estimated_accuracy_note"].get<std::string>().find(
              "two or more annotations") != std::string::npos);
  }

  SECTION("one class") {
    MetadataStore store(dir.file("one-class.db"));
    std::vector<NewSample> samples;
    for (int i = 0; i < 5; ++i) {
      NewSample s = sample("s" + std::to_string(i), 7, "s");
      s.annotations = {{"x", 7}, {"y", 7}};
      samples.push_back(s);
    }
    store.insert_samples(samples);
    const json r = build_quality_report(store);
    check_well_formed(r);
    const json& d = r["dataset"];
    CHECK(d["krippendorff_alpha"].is_null());
    CHECK(d["krippendorff_alpha_samples"] == 5);
    CHECK(d["fleiss_kappa"].is_null());
    CHECK(d["health_score"].get<double>() == Approx(1.0));
    CHECK(source_named(r, "x")["estimated_accuracy"].is_null());
    CHECK(source_named(r, "x")["cohen_kappa"].is_null());
    REQUIRE(r["classes"].size() == 1);
    CHECK(r["classes"][0]["class"] == "7");
  }

  SECTION("a class never given") {
    MetadataStore store(dir.file("never.db"));
    NewSample flagged = sample("f", 1, "s");
    flagged.decision = {SampleStatus::label_issue, std::nullopt, "flagged",
                        R"({"label_quality": {"suggested_label": "9"}})"};
    store.insert_samples({flagged, sample("g", 1, "s")});
    const json r = build_quality_report(store);
    check_well_formed(r);
    const json& nine = class_named(r, "9");
    CHECK(nine["given"] == 0);
    CHECK(nine["inverse_label_issues"] == 1);
    CHECK(nine["label_noise"].is_null());
    CHECK(nine["label_quality_score"].is_null());
    CHECK(r["classes"].back()["class"] == "9");  // unscored classes come last
    CHECK(r["dataset"]["health_score"].get<double>() == Approx(0.5));
  }
}

TEST_CASE("quality report: end to end through the ingest pipeline and `winnow report`",
          "[quality_report][cli]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=128)";
  config.label_flag_below = 0.0;  // no label issues: the statuses are known
  winnow::test::Pipeline::init(db, config);

  // Random words, so no two texts are near duplicates of each other; "good"
  // is always right, "fair" wrong 15% of the time, "bad" 30%, never both on
  // the same record (so the majority vote is right and the ranking is clear
  // even on 40 records; with two classes an annotator near 50% would be
  // ambiguous to Dawid-Skene, which may read it inverted).
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::bernoulli_distribution fair_errs(0.15), bad_errs(0.3);
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) {
    const std::string label = i % 2 == 0 ? "spam" : "ham";
    const std::string other = i % 2 == 0 ? "ham" : "spam";
    std::string text;
    for (int w = 0; w < 8; ++w) {
      for (int c = 0; c < 6; ++c) text += static_cast<char>(letter(rng));
      text += ' ';
    }
    const bool fair_wrong = fair_errs(rng);
    const bool bad_wrong = !fair_wrong && bad_errs(rng);
    json record = {{"key", "k" + std::to_string(i)},
                   {"text", text},
                   {"label", label},
                   {"source", i < 20 ? "vendor" : "crowd"},
                   {"annotations",
                    {{{"annotator", "good"}, {"label", label}},
                     {{"annotator", "fair"}, {"label", fair_wrong ? other : label}},
                     {{"annotator", "bad"}, {"label", bad_wrong ? other : label}}}}};
    lines.push_back(record.dump());
  }
  // An exact copy of k0's content under another key, and a broken line.
  json copy = json::parse(lines[0]);
  copy["key"] = "copy-of-k0";
  lines.push_back(copy.dump());
  lines.push_back("{not json");
  const std::string manifest = dir.file("m.jsonl");
  {
    std::ofstream f(manifest);
    for (const std::string& l : lines) f << l << "\n";
  }
  {
    winnow::test::Pipeline pipeline(db);
    pipeline.ingest_batch(manifest, file_checksum(manifest), read_manifest(manifest));
  }

  MetadataStore store(db);
  const json r = build_quality_report(store);
  check_well_formed(r);
  for (const char* key : {"schema_version", "generated_at", "winnow_version", "database", "dataset",
                          "sources", "classes", "confused_pairs", "batches"}) {
    CHECK(r.contains(key));
  }
  const json& d = r["dataset"];
  CHECK(d["samples"] == 42);
  CHECK(d["by_status"]["accepted"] == 40);
  CHECK(d["by_status"]["duplicate_exact"] == 1);
  CHECK(d["by_status"]["rejected"] == 1);
  CHECK(d["annotations"] == 123);  // the copy keeps its annotations
  CHECK(d["annotated_samples"] == 41);
  CHECK(d["fleiss_kappa_raters"] == 3);
  CHECK(d["class_distribution"] == json({{"ham", 20}, {"spam", 20}}));
  // Worst first; the broken line is a rejected sample of unknown source.
  INFO(r["sources"].dump());
  REQUIRE(r["sources"].size() == 6);
  CHECK(r["sources"][0]["name"] == "bad");
  CHECK(r["sources"][1]["name"] == "fair");
  CHECK(r["sources"][2]["name"] == "good");
  CHECK(r["sources"][2]["estimated_accuracy"].get<double>() > 0.9);
  CHECK(r["sources"][2]["agreement_with_consensus"].get<double>() == Approx(1.0));
  CHECK(d["consensus_vs_majority"].get<double>() == Approx(0.0));
  CHECK(r["sources"][3]["name"] == "(unknown)");
  CHECK(r["sources"][3]["submitted"] == 1);
  CHECK(r["sources"][3]["labels"] == 0);
  CHECK(r["sources"][4]["name"] == "crowd");
  CHECK(r["sources"][5]["name"] == "vendor");
  CHECK(r["sources"][5]["submitted"] == 21);  // with the copy of k0
  CHECK(r["sources"][5]["duplicate_share"].get<double>() == Approx(1.0 / 21.0));
  CHECK(r["sources"][0]["class_names"] == json({"ham", "spam"}));
  REQUIRE(r["batches"].size() == 1);
  CHECK(r["batches"][0]["counts"]["total"] == 42);
  CHECK(r["batches"][0]["state"] == "done");

  // The CLI: JSON to stdout and to a file, the per-sample export, the other
  // formats, and the exit codes.
  Run json_run = run_cli(dir, "report --db " + db);
  REQUIRE(json_run.rc == 0);
  const json printed = json::parse(json_run.out);
  CHECK(printed["dataset"]["samples"] == 42);
  CHECK(printed["sources"] == r["sources"]);

  const std::string out = dir.file("report.json");
  const std::string per_sample = dir.file("samples.jsonl");
  Run to_file = run_cli(
      dir, "report --db " + db + " --format json --out " + out + " --samples " + per_sample);
  CHECK(to_file.rc == 0);
  CHECK(to_file.out.empty());
  CHECK(json::parse(read_file(out))["dataset"]["annotations"] == 123);
  const std::vector<json> exported = json_lines(read_file(per_sample));
  CHECK(exported.size() == 41);  // the rejected line has neither label nor annotations
  CHECK(exported[0]["annotations"].size() == 3);

  Run markdown = run_cli(dir, "report --db " + db + " --format md");
  CHECK(markdown.rc == 0);
  CHECK_FALSE(markdown.out.empty());
  Run html = run_cli(dir, "report --db " + db + " --format html --out " + dir.file("r.html"));
  CHECK(html.rc == 0);
  CHECK(read_file(dir.file("r.html")).find("<html") != std::string::npos);

  Run missing = run_cli(dir, "report --db " + dir.file("missing.db"));
  CHECK(missing.rc == 1);
  CHECK(missing.err.find("does not exist") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
  CHECK(run_cli(dir, "report --db " + db + " --format pdf").rc == 1);
}

TEST_CASE("quality report: past 30 classes no annotator's matrix is written, a note instead",
          "[quality_report]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("many.db");
  REQUIRE(run_cli(dir, "init --db " + db).rc == 0);
  // 40 classes, 3 annotators, 200 items: two agree with the truth, one is off by one.
  {
    std::ofstream csv(dir.file("votes.csv"));
    csv << "item,annotator,label\n";
    for (int i = 0; i < 200; ++i) {
      const int truth = i % 40;
      csv << "i" << i << ",a,"
          << "c" << truth << "\n"
          << "i" << i << ",b,"
          << "c" << truth << "\n"
          << "i" << i << ",c,"
          << "c" << (truth + 1) % 40 << "\n";
    }
  }
  REQUIRE(run_cli(dir, "import-annotations --db " + db + " " + dir.file("votes.csv")).rc == 0);
  const Run report = run_cli(dir, "report --db " + db);
  REQUIRE(report.rc == 0);
  const json j = json::parse(report.out);
  std::size_t annotators = 0;
  for (const json& source : j["sources"]) {
    if (source["kind"] == "source") continue;
    ++annotators;
    CHECK(source["confusion"].is_null());
    CHECK_THAT(source["confusion_note"].get<std::string>(),
               Catch::Contains("40 classes") && Catch::Contains("up to 30"));
    CHECK(source["estimated_accuracy"].is_number());
  }
  CHECK(annotators == 3);
  // The class confusion: the 29 classes given most often and one "other".
  const json& confusion = j["dataset"]["class_confusion"];
  REQUIRE(confusion["class_names"].size() == 30);
  CHECK(confusion["class_names"][29] == "(other 11 classes)");
  CHECK_THAT(confusion["note"].get<std::string>(), Catch::Contains("40 classes"));
  std::int64_t total = 0;
  for (const json& row : confusion["counts"]) {
    REQUIRE(row.size() == 30);
    for (const json& cell : row) total += cell.get<std::int64_t>();
  }
  CHECK(total == j["dataset"]["labelled_samples"].get<std::int64_t>());
  for (const json& source : j["sources"]) CHECK(source["class_names"].empty());
  const Run html = run_cli(dir, "report --db " + db + " --format html");
  REQUIRE(html.rc == 0);
  CHECK(html.out.size() < 2'000'000);  // one 30x30 class table, no 40x40 per annotator
}
