// Annotations without content through the pipeline: a simulated crowd of
// three annotators of known accuracy, imported from its CSV, gets the same
// report (annotator accuracy, agreement, consensus, majority vote, class
// table) as the same annotations ingested with content; annotations-only
// samples skip the index and the checks and say so.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/curation_test_helpers.h"
#include "winnow/curation/readers/annotations/annotation_importer.h"
#include "support/curation_pipeline.h"
#include "winnow/curation/judge/record_decision.h"
#include "winnow/curation/report/quality_report.h"

namespace {

using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::judge;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using nlohmann::json;

const std::array<const char*, 4> kClasses = {"bird", "cat", "dog", "fish"};
const std::array<double, 3> kAccuracy = {0.9, 0.8, 0.7};

struct CrowdRow {
  std::string item, annotator, label;
};

// `items` items with a true class each; every annotator labels every item,
// right with its accuracy, else one of the other classes at random. The rows
// come sorted by annotator, as crowd-kit's files often are.
struct Crowd {
  std::map<std::string, std::string> truth;
  std::vector<CrowdRow> rows;
};

Crowd simulate_crowd(std::size_t items, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Crowd crowd;
  std::vector<std::pair<std::string, std::size_t>> truth;
  for (std::size_t i = 0; i < items; ++i) {
    truth.emplace_back("img-" + std::to_string(i), rng() % kClasses.size());
    crowd.truth[truth.back().first] = kClasses[truth.back().second];
  }
  for (std::size_t a = 0; a < kAccuracy.size(); ++a) {
    for (const auto& [item, t] : truth) {
      std::size_t label = t;
      if (unit(rng) >= kAccuracy[a])
        label = (t + 1 + rng() % (kClasses.size() - 1)) % kClasses.size();
      crowd.rows.push_back({item, "w" + std::to_string(a + 1), kClasses[label]});
    }
  }
  return crowd;
}

// Twelve random five-letter words.
std::string random_text(std::mt19937& rng) {
  std::string text;
  for (int w = 0; w < 12; ++w) {
    if (w > 0) text += ' ';
    for (int c = 0; c < 5; ++c) text += static_cast<char>('a' + rng() % 26);
  }
  return text;
}

CurationConfig text_config() {
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=64)";
  // Never flag by kNN: random texts' neighbours say nothing of the labels,
  // and both datasets must end with the same statuses to compare their reports.
  config.label_flag_below = 0.0;
  return config;
}

struct Report {
  json report;
  std::map<std::string, json> samples;  // per-sample export by key
};

Report report_of(const std::string& db) {
  winnow::store::MetadataStore store(db);
  report::QualityReportOptions options;
  options.generated_at = "2026-11-09T00:00:00Z";
  std::ostringstream export_lines;
  options.sample_export = &export_lines;
  Report r{report::build_quality_report(store, options), {}};
  std::istringstream lines(export_lines.str());
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line);
    r.samples[j["key"].get<std::string>()] = j;
  }
  return r;
}

// The report without what must differ between the two datasets: file names
// and times, and the label quality that only kNN (content) computes.
json comparable(json r) {
  for (const char* key : {"database", "generated_at", "batches"}) r.erase(key);
  // The kNN label vote judges content only.
  r["dataset"].erase("label_check");
  r["dataset"].erase("label_check_note");
  for (json& c : r["classes"]) {
    c.erase("mean_label_quality");
    c.erase("mean_label_quality_note");
  }
  return r;
}

double share_right(const std::map<std::string, json>& samples,
                   const std::map<std::string, std::string>& truth, const char* field) {
  std::size_t right = 0;
  for (const auto& [key, s] : samples) right += s[field] == truth.at(key);
  return static_cast<double>(right) / static_cast<double>(samples.size());
}

}  // namespace

TEST_CASE("import-annotations: a simulated crowd's report equals the same annotations with content",
          "[curation][annotations]") {
  test::ScratchDir dir;
  const Crowd crowd = simulate_crowd(300, 20261109);

  // From the CSV, as a labelling tool exports it.
  std::string csv = "item,annotator,label\n";
  for (const CrowdRow& r : crowd.rows) csv += r.item + "," + r.annotator + "," + r.label + "\n";
  const std::string csv_path = dir.write("crowd.csv", csv);
  const std::string annotations_db = dir.file("annotations.db");
  winnow::test::Pipeline::init(annotations_db, text_config());
  AnnotationImporter importer(csv_path, {});
  // The same items with a text content each, in the order the importer
  // gives them (first appearance), with the same annotations in file order.
  std::vector<ManifestEntry> with_content;
  std::mt19937 rng(7);
  {
    winnow::test::Pipeline pipeline(annotations_db);
    const BatchReport r =
        pipeline.ingest_batch("crowd.csv", importer.checksum(), [&](ManifestEntry& e) {
          if (!importer.next(e)) return false;
          ManifestEntry copy = e;
          copy.record->kind = ContentKind::text;
          copy.record->text = random_text(rng);  // no two alike: no near duplicates
          with_content.push_back(std::move(copy));
          return true;
        });
    CHECK(r.counts[winnow::store::SampleStatus::accepted] == 300);
    CHECK(r.counts.total() == 300);
    CHECK(pipeline.index_info().vectors == 0);  // nothing was embedded
  }
  const std::string content_db = dir.file("content.db");
  winnow::test::Pipeline::init(content_db, text_config());
  {
    winnow::test::Pipeline pipeline(content_db);
    const BatchReport r = pipeline.ingest_batch("content", "content", std::move(with_content));
    CHECK(r.counts[winnow::store::SampleStatus::accepted] == 300);
    CHECK(pipeline.index_info().vectors == 300);
  }

  const Report from_annotations = report_of(annotations_db);
  const Report from_content = report_of(content_db);
  CHECK(comparable(from_annotations.report) == comparable(from_content.report));
  CHECK(from_annotations.samples == from_content.samples);  // consensus, majority, annotations

  // And the figures are the crowd's: each annotator's estimated accuracy
  // near its true one, and the majority vote (the label of an item without
  // gold) and the consensus near their accuracies.
  const json& d = from_annotations.report["dataset"];
  CHECK(d["annotations"] == 900);
  CHECK(d["multiply_annotated_samples"] == 300);
  std::map<std::string, double> estimated;
  for (const json& s : from_annotations.report["sources"]) {
    if (s["kind"] == "annotator") estimated[s["name"].get<std::string>()] = s["estimated_accuracy"];
  }
  REQUIRE(estimated.size() == 3);
  CHECK(estimated["w1"] == Approx(kAccuracy[0]).margin(0.05));
  CHECK(estimated["w2"] == Approx(kAccuracy[1]).margin(0.05));
  CHECK(estimated["w3"] == Approx(kAccuracy[2]).margin(0.06));
  const double majority = share_right(from_annotations.samples, crowd.truth, "given_label");
  const double consensus = share_right(from_annotations.samples, crowd.truth, "consensus_label");
  INFO("majority vote " << majority << ", consensus " << consensus);
  CHECK(majority > 0.85);
  CHECK(consensus >= majority - 0.01);
}

TEST_CASE("import-annotations: samples skip the index and every check, and say so",
          "[curation][annotations]") {
  test::ScratchDir dir;
  const std::string db = dir.file("mixed.db");
  winnow::test::Pipeline::init(db, text_config());
  // Content samples first: 20 'cat' texts.
  std::vector<ManifestEntry> texts(20);
  std::mt19937 rng(11);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ManifestRecord r;
    r.key = "text-" + std::to_string(i);
    r.kind = ContentKind::text;
    r.text = random_text(rng);
    r.label = "cat";
    texts[i].record = std::move(r);
  }
  winnow::test::Pipeline(db).ingest_batch("texts", "texts", std::move(texts));

  const std::string csv =
      dir.write("votes.csv",
                "item,annotator,label,gold\n"
                "text-3,w1,cat,\n"  // a content sample's key: a later round for it
                "v1,w1,dog,\n"
                "v1,w2,dog,\n"
                "v2,w1,dog,\n"
                "v2,w2,cat,cat\n"
                "v3,w1,dog,\n"
                "v3,w2,dog,\n");
  winnow::test::Pipeline pipeline(db);
  AnnotationImporter importer(csv, {});
  const BatchReport r = pipeline.ingest_batch("votes.csv", importer.checksum(),
                                              [&](ManifestEntry& e) { return importer.next(e); });
  CHECK(r.counts[winnow::store::SampleStatus::accepted] == 3);
  CHECK(r.counts[winnow::store::SampleStatus::rejected] == 0);
  CHECK(r.rejections.empty());
  CHECK(r.annotation_rounds.items == 1);  // text-3 took w1's annotation, its label kept
  CHECK(r.annotation_rounds.added == 1);
  CHECK(r.annotation_rounds.relabelled == 0);
  CHECK(pipeline.index_info().vectors == 20);

  winnow::store::MetadataStore& store = pipeline.store();
  const auto v2 = store.find_by_external_key("v2");
  REQUIRE(v2);
  CHECK(v2->status == winnow::store::SampleStatus::accepted);
  CHECK(pipeline.label_names().name_of(*v2->label) == "cat");  // the gold label
  CHECK_FALSE(v2->label_quality);
  CHECK_FALSE(v2->gain);
  CHECK(pipeline.label_names().name_of(*store.find_by_external_key("v1")->label) == "dog");
  CHECK(store.annotations_of(v2->id).size() == 2);
  const auto events = store.events_of(v2->id);
  REQUIRE(events.size() == 1);
  CHECK(events[0].reason == kAnnotationsOnlyReason);
  CHECK(json::parse(events[0].details_json)["annotations_only"] == true);

  // The store tells them from indexed samples, so a reopened pipeline does
  // not count them as label support (samples a text's neighbours never hold).
  const auto accepted = store.accepted_samples();
  CHECK(std::count_if(accepted.begin(), accepted.end(),
                      [](const winnow::store::AcceptedSample& s) { return !s.has_vector; }) == 3);

  // The same file again is the same batch: skipped.
  AnnotationImporter again(csv, {});
  const BatchReport second = pipeline.ingest_batch("votes.csv", again.checksum(),
                                                   [&](ManifestEntry& e) { return again.next(e); });
  CHECK(second.skipped);
}

TEST_CASE("a manifest line with only annotations is a later round for a stored sample",
          "[curation][annotations]") {
  test::ScratchDir dir;
  const std::string db = dir.file("rounds.db");
  winnow::test::Pipeline::init(db, text_config());
  std::mt19937 rng(5);
  std::vector<ManifestEntry> texts(1);
  ManifestRecord r;
  r.key = "text-0";
  r.kind = ContentKind::text;
  r.text = random_text(rng);
  r.annotations = {{"w1", "cat"}};
  texts[0].record = std::move(r);
  winnow::test::Pipeline pipeline(db);
  pipeline.ingest_batch("texts", "texts", std::move(texts));

  const std::string manifest = dir.write(
      "round.jsonl", R"({"key": "text-0", "annotations": [{"annotator": "w2", "label": "cat"}]})"
                     "\n"
                     R"({"key": "nobody", "annotations": [{"annotator": "w2", "label": "dog"}]})"
                     "\n"
                     R"({"key": "empty", "annotations": []})"
                     "\n");
  const std::vector<ManifestEntry> entries = readers::read_manifest(manifest);
  const BatchReport round = pipeline.ingest_batch(manifest, "round", entries);
  CHECK(round.annotation_rounds.items == 1);
  CHECK(round.annotation_rounds.added == 1);
  CHECK(
      pipeline.store().annotations_of(pipeline.store().find_by_external_key("text-0")->id).size() ==
      2);
  // An unknown key is refused by name, not made a new sample; a line with
  // neither content nor annotations is refused as before.
  REQUIRE(round.rejections.size() == 2);
  std::string reasons;
  for (const auto& group : round.rejections) reasons += group.reason + "\n";
  CHECK_THAT(reasons, Catch::Matchers::Contains("key 'nobody' is not in the dataset") &&
                          Catch::Matchers::Contains("no content: one of"));
  CHECK(round.counts[winnow::store::SampleStatus::accepted] == 0);
}
