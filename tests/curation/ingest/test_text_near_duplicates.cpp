// Text near duplicates through the ingest pipeline: text records have their
// own candidate gate (text_min_candidate_similarity), so an edited paragraph
// the verifier accepts is not dropped by the pixels embedder's 0.98 gate; the
// verifier's overlap rule finds a paragraph with a sentence appended; and
// configs stored before those fields existed still load with the old rules.
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/embed/embedder.h"
#include "support/curation_pipeline.h"
#include "winnow/error.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;

// A paragraph of apt-get(8) and a copy with a comma dropped, a word replaced,
// a word deleted and a sentence appended (shingle Jaccard 0.867).
const std::string kParagraph =
    "update is used to resynchronize the package index files from their sources. The indexes of "
    "available packages are fetched from the location(s) specified in /etc/apt/sources.list. For "
    "example, when using a Debian archive, this command retrieves and scans the Packages.gz "
    "files, so that information about new and updated packages is available. An update should "
    "always be performed before an upgrade or dist-upgrade.";
const std::string kEditedCopy =
    "update is used to resynchronize the package index files from their sources. The indexes of "
    "available packages are fetched from the location(s) specified in /etc/apt/sources.list. For "
    "example when using a Debian archive, this command retrieves and reads the Packages.gz "
    "files, so that information about new and updated packages is available. An update should "
    "be performed before an upgrade or dist-upgrade. Run it as root.";
const std::string kUnrelated =
    "Write attribute subpackets to the file descriptor n. This is most useful for use with "
    "--status-fd, since the status messages are needed to separate out the various subpackets "
    "from the stream delivered to the file descriptor.";

ManifestRecord text_record(const std::string& key, const std::string& text) {
  ManifestRecord r;
  r.key = key;
  r.kind = ContentKind::text;
  r.text = text;
  return r;
}

std::string write_manifest(const std::string& path) {
  std::ofstream f(path);
  f << json{{"key", "original"}, {"text", kParagraph}}.dump() << "\n"
    << json{{"key", "unrelated"}, {"text", kUnrelated}}.dump() << "\n"
    << json{{"key", "copy"}, {"text", kEditedCopy}}.dump() << "\n";
  return path;
}

// Ingests original, unrelated, copy into a new database with `config`.
std::optional<SampleRecord> ingest_and_find_copy(const winnow::test::TempDir& dir,
                                                 const CurationConfig& config,
                                                 std::int64_t& original_id) {
  const std::string db = dir.file("text.db");
  winnow::test::Pipeline::init(db, config);
  winnow::test::Pipeline p(db);
  const std::string manifest = write_manifest(dir.file("t.jsonl"));
  p.ingest_batch(manifest, file_checksum(manifest), read_manifest(manifest));
  original_id = p.store().find_by_external_key("original")->id;
  return p.store().find_by_external_key("copy");
}

}  // namespace

TEST_CASE("the edited paragraph is a near duplicate the image gate would not verify",
          "[ingest][text]") {
  // Preconditions of the next test: the verifier accepts the pair, and its
  // index cosine is below the pixels gate, 0.98.
  const auto a = dedup::TextNearDuplicateVerifier::shingles(kParagraph, 5);
  const auto b = dedup::TextNearDuplicateVerifier::shingles(kEditedCopy, 5);
  const double jaccard = dedup::TextNearDuplicateVerifier::jaccard(a, b);
  CHECK(jaccard >= 0.85);
  CHECK(jaccard < 0.9);
  const auto embedder = embed::make_embedder("hashed-ngrams(n=3,dim=256)");
  const std::vector<float> ea = embedder->embed(text_record("a", kParagraph));
  const std::vector<float> eb = embedder->embed(text_record("b", kEditedCopy));
  double cosine = 0.0;
  for (std::size_t i = 0; i < ea.size(); ++i) cosine += double(ea[i]) * eb[i];
  CHECK(cosine < CurationConfig{}.min_candidate_similarity);
  CHECK(cosine >= CurationConfig{}.text_min_candidate_similarity);
}

TEST_CASE("an edited paragraph (Jaccard 0.87) is flagged near_duplicate with the text defaults",
          "[ingest][text]") {
  winnow::test::TempDir dir;
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";  // every other field a default
  std::int64_t original = -1;
  const auto copy = ingest_and_find_copy(dir, config, original);
  REQUIRE(copy);
  CHECK(copy->status == SampleStatus::duplicate_near);
  CHECK(copy->duplicate_of == original);
}

TEST_CASE("with the image gate for text the same copy is missed", "[ingest][text]") {
  // The failure the text gate fixes (issue 19): the copy is never verified.
  winnow::test::TempDir dir;
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  config.text_min_candidate_similarity = config.min_candidate_similarity;
  std::int64_t original = -1;
  const auto copy = ingest_and_find_copy(dir, config, original);
  REQUIRE(copy);
  CHECK(copy->status == SampleStatus::accepted);
}

TEST_CASE("the text gate is stored, and an older config without it still loads", "[config]") {
  CHECK(CurationConfig{}.min_candidate_similarity == 0.98);  // the pixels gate is unchanged
  CHECK(CurationConfig{}.text_min_candidate_similarity == 0.7);

  CurationConfig config;
  config.text_min_candidate_similarity = 0.9;
  CHECK(CurationConfig::from_json(config.to_json()).text_min_candidate_similarity == 0.9);

  // As written by a winnow before the field existed: the text gate becomes
  // the Jaccard-only rule's 0.85, or the stored gate when that was lower
  // (never stricter).
  json old = json::parse(CurationConfig{}.to_json());
  old.erase("text_min_candidate_similarity");
  old.erase("text_min_jaccard");
  const CurationConfig image_gate = CurationConfig::from_json(old.dump());
  CHECK(image_gate.min_candidate_similarity == 0.98);
  CHECK(image_gate.text_min_candidate_similarity == 0.85);
  old["min_candidate_similarity"] = 0.5;
  CHECK(CurationConfig::from_json(old.dump()).text_min_candidate_similarity == 0.5);

  json bad = json::parse(CurationConfig{}.to_json());
  bad["text_min_candidate_similarity"] = 1.5;
  CHECK_THROWS_WITH(CurationConfig::from_json(bad.dump()),
                    Catch::Contains("text_min_candidate_similarity=1.5"));
}

TEST_CASE("regain with a new embedder sets the text gate, and only with one", "[rejudge][text]") {
  winnow::test::TempDir dir;
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  std::int64_t original = -1;
  ingest_and_find_copy(dir, config, original);
  winnow::test::Pipeline p(dir.file("text.db"));
  RejudgeOptions without_embedder;
  without_embedder.text_min_candidate_similarity = 0.7;
  CHECK_THROWS_WITH(p.rejudge(without_embedder), Catch::Contains("--embedder"));
  RejudgeOptions options;
  options.embedder = "hashed-ngrams(n=3,dim=128)";
  options.text_min_candidate_similarity = 0.7;
  p.rejudge(options);
  CHECK(p.config().text_min_candidate_similarity == 0.7);
  CHECK(p.config().min_candidate_similarity == 0.98);  // the pixels gate: unchanged
  winnow::test::Pipeline reopened(dir.file("text.db"));
  CHECK(reopened.config().text_min_candidate_similarity == 0.7);
}

namespace {

// kParagraph with two words edited and a long sentence appended: the
// Jaccard falls to about 0.7, while 0.9 and more of the paragraph's shingles
// are still in the copy.
const std::string kAppendedCopy =
    kParagraph.substr(0, kParagraph.size() - 1) +
    " first. Run it as root, or with sudo, whenever the sources list has changed, a new "
    "release is out, or apt reports that the package lists are missing or out of date.";

// The first sentence of kParagraph alone: contained in it, Jaccard far below 0.5.
const std::string kFirstSentence =
    "update is used to resynchronize the package index files from their sources.";

double pair_jaccard(const std::string& a, const std::string& b) {
  return dedup::TextNearDuplicateVerifier::jaccard(
      dedup::TextNearDuplicateVerifier::shingles(a, 5),
      dedup::TextNearDuplicateVerifier::shingles(b, 5));
}

double pair_overlap(const std::string& a, const std::string& b) {
  return dedup::TextNearDuplicateVerifier::overlap(
      dedup::TextNearDuplicateVerifier::shingles(a, 5),
      dedup::TextNearDuplicateVerifier::shingles(b, 5));
}

}  // namespace

TEST_CASE("the text verifier: overlap of the smaller text, under a Jaccard floor",
          "[dedup][text]") {
  using dedup::TextNearDuplicateVerifier;
  const TextNearDuplicateVerifier verifier;  // the defaults: overlap 0.8, Jaccard 0.5
  const double appended_jaccard = pair_jaccard(kParagraph, kAppendedCopy);
  const double appended_overlap = pair_overlap(kParagraph, kAppendedCopy);
  REQUIRE(appended_jaccard >= 0.5);
  REQUIRE(appended_jaccard < 0.8);
  REQUIRE(appended_overlap >= 0.9);
  CHECK(verifier.similarity(text_record("a", kParagraph), text_record("b", kAppendedCopy)) ==
        Approx(appended_overlap));
  // Contained, but too small a part of the other: its Jaccard, below threshold.
  const double sentence_jaccard = pair_jaccard(kParagraph, kFirstSentence);
  REQUIRE(pair_overlap(kParagraph, kFirstSentence) == 1.0);
  REQUIRE(sentence_jaccard < 0.5);
  CHECK(verifier.similarity(text_record("a", kParagraph), text_record("b", kFirstSentence)) ==
        Approx(sentence_jaccard));
  // min_jaccard == threshold is the Jaccard-only rule.
  const TextNearDuplicateVerifier jaccard_only({5, 0.8, 0.8});
  CHECK(jaccard_only.similarity(text_record("a", kParagraph), text_record("b", kAppendedCopy)) <
        jaccard_only.threshold());
  CHECK_THROWS_WITH(TextNearDuplicateVerifier({5, 0.8, 0.9}), Catch::Contains("min_jaccard=0.9"));
  // Empty texts: equal, and unlike any non-empty text.
  CHECK(TextNearDuplicateVerifier::overlap({}, {}) == 1.0);
  CHECK(TextNearDuplicateVerifier::overlap({}, {1, 2}) == 0.0);
}

TEST_CASE(
    "a paragraph with a sentence appended is a near duplicate by default, not by Jaccard only",
    "[ingest][text]") {
  for (const bool jaccard_only : {false, true}) {
    winnow::test::TempDir dir;
    CurationConfig config;
    config.embedder = "hashed-ngrams(n=3,dim=256)";
    if (jaccard_only) config.text_min_jaccard = config.text_threshold;
    const std::string db = dir.file("text.db");
    winnow::test::Pipeline::init(db, config);
    winnow::test::Pipeline p(db);
    const std::string manifest = dir.file("t.jsonl");
    {
      std::ofstream f(manifest);
      f << json{{"key", "original"}, {"text", kParagraph}}.dump() << "\n"
        << json{{"key", "sentence"}, {"text", kFirstSentence}}.dump() << "\n"
        << json{{"key", "appended"}, {"text", kAppendedCopy}}.dump() << "\n";
    }
    p.ingest_batch(manifest, file_checksum(manifest), read_manifest(manifest));
    const auto appended = p.store().find_by_external_key("appended");
    REQUIRE(appended);
    CHECK(appended->status ==
          (jaccard_only ? SampleStatus::accepted : SampleStatus::duplicate_near));
    CHECK(p.store().find_by_external_key("sentence")->status == SampleStatus::accepted);
  }
}

TEST_CASE("a config stored before text_min_jaccard keeps the Jaccard-only rule", "[config]") {
  json old = json::parse(CurationConfig{}.to_json());
  old.erase("text_min_jaccard");
  old["text_threshold"] = 0.75;
  const CurationConfig loaded = CurationConfig::from_json(old.dump());
  CHECK(loaded.text_min_jaccard == 0.75);
  CHECK(CurationConfig{}.text_min_jaccard == 0.5);
  json bad = json::parse(CurationConfig{}.to_json());
  bad["text_min_jaccard"] = 0.9;  // above the threshold
  CHECK_THROWS_WITH(CurationConfig::from_json(bad.dump()), Catch::Contains("min_jaccard=0.9"));
}
