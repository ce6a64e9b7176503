// The label check judges where the embedder's neighbours beat chance and
// abstains where they do not (labels::LabelEvidence), at ingest, in the
// re-judging after a batch and in `rejudge`, through the real store and index.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/curation_pipeline.h"
#include "support/temp_dir.h"
#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/store/metadata_store.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::curation;

constexpr int kDim = 16;
constexpr int kClasses = 12;

// A text nobody else has, so no record is a near duplicate of another.
std::string unique_text(std::mt19937& rng) {
  static const char* kLetters = "abcdefghijklmnopqrstuvwxyz";
  std::string text;
  for (int i = 0; i < 60; ++i) text += kLetters[rng() % 26];
  return text;
}

// `per_class` records of each of kClasses labels. Separable: a record's
// vector is its class's axis plus a little noise; otherwise a random
// direction, whatever its label. Records `flipped` (by position) carry the
// next class's label instead.
std::string write_records(const std::string& path, int per_class, bool separable,
                          const std::vector<int>& flipped, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::ofstream f(path);
  int n = 0;
  for (int i = 0; i < per_class; ++i) {
    for (int c = 0; c < kClasses; ++c, ++n) {
      std::vector<float> v(kDim);
      for (float& x : v) x = separable ? 0.15f * noise(rng) : noise(rng);
      if (separable) v[static_cast<std::size_t>(c)] += 1.0f;
      int label = c;
      if (std::find(flipped.begin(), flipped.end(), n) != flipped.end()) {
        label = (c + 1) % kClasses;
      }
      f << json{{"key", "r" + std::to_string(n)},
                {"text", unique_text(rng)},
                {"embedding", v},
                {"label", "class-" + std::to_string(label)}}
               .dump()
        << "\n";
    }
  }
  return path;
}

ingest::BatchReport ingest_file(test::Pipeline& p, const std::string& path) {
  return p.ingest_batch(path, readers::file_checksum(path), readers::read_manifest(path));
}

// Judging a label once 30 samples carry it: these tests' classes have 40.
CurationConfig provided_config(double min_lift) {
  CurationConfig config;
  config.embedder = "provided(dim=16)";
  config.label_k = 30;
  config.label_min_lift = min_lift;
  return config;
}

}  // namespace

TEST_CASE("the label check abstains where neighbours do not beat chance", "[labels][abstain]") {
  test::TempDir dir;
  const std::string records = write_records(dir.file("noise.jsonl"), 40, false, {}, 7);

  const std::string db = dir.file("new.db");
  test::Pipeline::init(db, provided_config(0.25));
  test::Pipeline p(db);
  const ingest::BatchReport r = ingest_file(p, records);
  CHECK(r.counts[store::SampleStatus::label_issue] == 0);
  CHECK(r.counts[store::SampleStatus::accepted] == 40 * kClasses);
  REQUIRE(r.label_check.is_object());
  CHECK(r.label_check["judges"] == "no class");
  CHECK(r.label_check["abstained"] == kClasses);
  CHECK(r.label_check["lift"].get<double>() < 0.25);
  // A class has label_k accepted samples only late in one batch, so the
  // spared verdicts are mostly those of the re-judging after it.
  const std::int64_t spared = r.label_check["would_have_flagged"].get<std::int64_t>() +
                              static_cast<std::int64_t>(r.labels_rejudged.abstained);
  CHECK(spared > 10);
  CHECK(r.label_check["line"].get<std::string>().find("abstains on every class") !=
        std::string::npos);

  // The samples the vote would have flagged say so in their decision.
  int noted = 0;
  p.store().for_each_sample_with_decision(
      [&](const store::SampleRecord&, const store::MetadataStore::DecisionText& d) {
        noted += d.reason.find("label check abstains") != std::string::npos;
      });
  CHECK(noted == r.label_check["would_have_flagged"].get<std::int64_t>());
  CHECK(r.labels_rejudged.newly_flagged == 0);

  // A full re-judge reads the same evidence and flags nothing either.
  review::RejudgeOptions options;
  options.labels = true;
  const review::RejudgeReport rejudged = p.rejudge(options);
  CHECK(p.store().count_by_status()[store::SampleStatus::label_issue] == 0);
  CHECK(rejudged.judged == 40 * kClasses);
  CHECK(rejudged.newly_flagged == 0);
}

TEST_CASE("the label check judges where classes are apart and flags the flipped labels",
          "[labels][abstain]") {
  test::TempDir dir;
  const std::vector<int> flipped = {250, 301, 377, 420};
  const std::string records = write_records(dir.file("apart.jsonl"), 40, true, flipped, 11);
  const std::string db = dir.file("apart.db");
  test::Pipeline::init(db, provided_config(0.25));
  test::Pipeline p(db);
  const ingest::BatchReport r = ingest_file(p, records);
  CHECK(r.counts[store::SampleStatus::label_issue] == static_cast<std::int64_t>(flipped.size()));
  for (int n : flipped) {
    CHECK(p.store().find_by_external_key("r" + std::to_string(n))->status ==
          store::SampleStatus::label_issue);
  }
  REQUIRE(r.label_check.is_object());
  CHECK(r.label_check["judges"] == "every class");
  CHECK(r.label_check["lift"].get<double>() > 0.8);
  CHECK(r.label_check["would_have_flagged"] == 0);
  const labels::LabelEvidence stored = stored_label_evidence(p.store(), p.config());
  CHECK(stored.samples() == 40 * kClasses);
  CHECK(stored.abstained().empty());
}

TEST_CASE("flags stand only where the vote still judges: an abstained class's are cleared",
          "[labels][abstain]") {
  test::TempDir dir;
  const std::string db = dir.file("drift.db");
  test::Pipeline::init(db, provided_config(0.25));
  test::Pipeline p(db);
  // Batch 1: classes apart, four labels flipped and flagged.
  const std::vector<int> flipped = {250, 301, 377, 420};
  const ingest::BatchReport first =
      ingest_file(p, write_records(dir.file("apart.jsonl"), 40, true, flipped, 11));
  REQUIRE(first.counts[store::SampleStatus::label_issue] == 4);
  // Batch 2: ten times as many samples of the same classes, in random
  // directions: the classes' neighbours no longer beat chance, so the vote
  // abstains on them, and the four flags it made are cleared.
  std::string noise = dir.file("noise.jsonl");
  {
    std::ifstream in(write_records(dir.file("noise-src.jsonl"), 400, false, {}, 5));
    std::ofstream out(noise);
    std::string line;
    while (std::getline(in, line)) {  // keys of their own
      json j = json::parse(line);
      j["key"] = "noise-" + j["key"].get<std::string>();
      out << j.dump() << "\n";
    }
  }
  const ingest::BatchReport second = ingest_file(p, noise);
  REQUIRE(second.label_check.is_object());
  CHECK(second.label_check["judges"] == "no class");
  CHECK(p.store().count_by_status()[store::SampleStatus::label_issue] == 0);
  CHECK(second.labels_rejudged.cleared >= 4);
  for (int n : flipped) {
    const auto sample = p.store().find_by_external_key("r" + std::to_string(n));
    CHECK(sample->status == store::SampleStatus::accepted);
    CHECK_THAT(p.store().events_of(sample->id).back().reason,
               Catch::Contains("abstains on this class"));
  }
}
