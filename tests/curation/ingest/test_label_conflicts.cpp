// Copies whose label differs from their original's are label conflicts:
// said in the decision, counted in the batch and by the store.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/curation_pipeline.h"
#include "support/temp_dir.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::curation;
using nlohmann::json;

TEST_CASE("a copy labelled otherwise than its original is a label conflict", "[label_conflict]") {
  test::TempDir dir;
  const std::string db = dir.file("c.db");
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  test::Pipeline::init(db, config);
  const std::string text =
      "The quick brown fox jumps over the lazy dog while the cat watches from the wall, "
      "unimpressed by the whole affair and thinking about dinner instead of foxes.";
  const std::string path = dir.file("m.jsonl");
  {
    std::ofstream f(path);
    f << json{{"key", "original"}, {"text", text}, {"label", "animals"}}.dump() << "\n"
      << json{{"key", "same-label"}, {"text", text}, {"label", "animals"}}.dump() << "\n"
      << json{{"key", "exact"}, {"text", text}, {"label", "mammals"}}.dump() << "\n"
      << json{{"key", "near"}, {"text", text + " Then it rained."}, {"label", "weather"}}.dump()
      << "\n"
      << json{{"key", "unlabelled"}, {"text", text}}.dump() << "\n";
  }
  test::Pipeline p(db);
  const ingest::BatchReport r =
      p.ingest_batch(path, readers::file_checksum(path), readers::read_manifest(path));
  CHECK(r.counts[store::SampleStatus::duplicate_exact] == 3);
  CHECK(r.counts[store::SampleStatus::duplicate_near] == 1);
  CHECK(r.label_conflicts == 2);
  CHECK(p.store().count_label_conflicts() == 2);

  const auto decision_of = [&](const std::string& key) {
    const std::int64_t id = p.store().find_by_external_key(key)->id;
    return p.store().events_of(id).back();
  };
  const auto exact = decision_of("exact");
  CHECK_THAT(exact.reason,
             Catch::Contains("a label conflict: labelled \"mammals\", its original \"animals\""));
  const json details = json::parse(exact.details_json);
  CHECK(details["label_conflict"]["label"] == "mammals");
  CHECK(details["label_conflict"]["original_label"] == "animals");
  CHECK_THAT(decision_of("near").reason, Catch::Contains("labelled \"weather\""));
  CHECK_THAT(decision_of("same-label").reason, !Catch::Contains("label conflict"));
  CHECK_THAT(decision_of("unlabelled").reason, !Catch::Contains("label conflict"));
}
