// review::rejudge with --labels and --embedder over a real SQLite file
// and index file: label issues added and cleared, the dataset's embedder
// switched, all or nothing on error, and a second pipeline on the same
// database picking up the change.
//
// The data: two topics of text records (animal words, tool words), labelled
// 0 and 1, ingested with `provided(dim=4)` embeddings that put each topic on
// its own axis. Two records lie about their place: `misplaced` (animal text,
// label 0) comes with a tool-axis vector, so ingest flags it; `disguised`
// (tool text, label 0) comes with an animal-axis vector, so ingest accepts
// it. Re-embedding the texts with hashed n-grams puts both where their words
// are: regain clears `misplaced` and flags `disguised`.
//
// At the end, ingest's own re-judging after each batch (stale_labels.cpp):
// a label judged when the dataset was small is judged again as it grows.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "winnow/curation/readers/annotations/annotation_importer.h"
#include "winnow/curation/report/quality_report.h"
#include "winnow/curation/review/consensus_estimates.h"
#include "winnow/curation/review/consensus_labels.h"
#include "winnow/curation/judge/information_gain.h"
#include "support/curation_pipeline.h"
#include "winnow/error.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::judge;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using namespace winnow::curation::labels;

const std::vector<std::string> kAnimals = {"otter",  "badger", "heron", "lynx",  "marten", "ibex",
                                           "falcon", "walrus", "bison", "gecko", "puffin", "tapir"};
const std::vector<std::string> kTools = {"chisel", "wrench", "pliers",  "hammer",
                                         "trowel", "anvil",  "spanner", "rasp",
                                         "gimlet", "awl",    "mallet",  "scythe"};

// Twelve words drawn from one vocabulary: records of a topic share words, but
// no two are near duplicates (shingle Jaccard far below 0.8).
std::string words(const std::vector<std::string>& vocabulary, std::mt19937& rng) {
  std::string text;
  std::uniform_int_distribution<std::size_t> pick(0, vocabulary.size() - 1);
  for (int w = 0; w < 12; ++w) text += (w ? " " : "") + vocabulary[pick(rng)];
  return text;
}

// A unit vector on `axis` (0..3) plus a little noise.
std::vector<float> near_axis(int axis, std::mt19937& rng) {
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> v(4);
  for (int d = 0; d < 4; ++d)
    v[static_cast<std::size_t>(d)] = (d == axis ? 1.0f : 0.0f) + noise(rng);
  return v;
}

std::string record(const std::string& key, const std::string& text, int label,
                   const std::vector<float>& embedding) {
  json j = {{"key", key}, {"text", text}, {"label", std::to_string(label)}, {"source", "test"}};
  if (!embedding.empty()) j["embedding"] = embedding;
  return j.dump();
}

std::string write_manifest(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const auto& l : lines) f << l << "\n";
  return path;
}

BatchReport ingest_file(winnow::test::Pipeline& p, const std::string& path) {
  return p.ingest_batch(path, file_checksum(path), read_manifest(path));
}

SampleStatus status_of(winnow::test::Pipeline& p, const std::string& key) {
  auto s = p.store().find_by_external_key(key);
  REQUIRE(s);
  return s->status;
}

// Batch 1: 30 animal records (label 0, axis 0), 30 tool records (label 1,
// axis 1). Batch 2: `misplaced` and `disguised` (in a batch of their own, so
// that their label is judged: ingest judges a label only once label_k
// samples of it are accepted, and counts a micro-batch when it is written).
std::string first_batch(const winnow::test::TempDir& dir, std::mt19937& rng) {
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) {
    lines.push_back(
        record("animal-" + std::to_string(i), words(kAnimals, rng), 0, near_axis(0, rng)));
    lines.push_back(record("tool-" + std::to_string(i), words(kTools, rng), 1, near_axis(1, rng)));
  }
  return write_manifest(dir.file("batch-1.jsonl"), lines);
}

std::string second_batch(const winnow::test::TempDir& dir, std::mt19937& rng) {
  return write_manifest(dir.file("batch-2.jsonl"),
                        {record("misplaced", words(kAnimals, rng), 0, near_axis(1, rng)),
                         record("disguised", words(kTools, rng), 0, near_axis(0, rng))});
}

// A record of `text` with a vector near `axis` and the annotators' votes.
using Votes = std::vector<std::pair<std::string, int>>;
std::string annotated_record(const std::string& key, const std::string& text, int axis,
                             const Votes& votes, std::mt19937& rng) {
  json annotations = json::array();
  for (const auto& [who, label] : votes) {
    annotations.push_back({{"annotator", who}, {"label", std::to_string(label)}});
  }
  return json{{"key", key},
              {"text", text},
              {"embedding", near_axis(axis, rng)},
              {"annotations", annotations}}
      .dump();
}

// 30 animal (0) and 30 tool (1) records annotated by `good` (always right),
// `decent` (wrong on record `decent_wrong` of every ten) and `bad` (a coin flip).
std::vector<std::string> crowd_records(int decent_wrong, std::mt19937& rng) {
  std::bernoulli_distribution coin(0.5);
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) {
    for (const int truth : {0, 1}) {
      const int decent = i % 10 == decent_wrong ? 1 - truth : truth;
      const int bad = coin(rng) ? truth : 1 - truth;
      const std::string text = words(truth ? kTools : kAnimals, rng);
      lines.push_back(annotated_record((truth ? "tool-" : "animal-") + std::to_string(i), text,
                                       truth, {{"good", truth}, {"decent", decent}, {"bad", bad}},
                                       rng));
    }
  }
  return lines;
}

constexpr const char* kTextEmbedder = "hashed-ngrams(n=3,dim=64,seed=5)";

RejudgeOptions relabel() {
  RejudgeOptions o;
  o.labels = true;
  return o;
}

RejudgeOptions reembed(const std::string& spec,
                       std::optional<double> min_candidate = std::nullopt) {
  RejudgeOptions o;
  o.embedder = spec;
  o.min_candidate_similarity = min_candidate;
  return o;
}

// A fresh dataset with the provided(dim=4) embedder, judging a label once 30
// samples carry it (these tests' classes have 30); returns its file.
// Ingest's own re-judging after each batch is off: these tests set up what
// ingest decided and judge what regain makes of it (test_stale_labels.cpp
// tests the re-judging).
std::string provided_dataset(const winnow::test::TempDir& dir) {
  const std::string db = dir.file("data.db");
  CurationConfig config;
  config.embedder = "provided(dim=4)";
  config.label_k = 30;
  config.label_rejudge_growth = 0.0;
  winnow::test::Pipeline::init(db, config);
  return db;
}

}  // namespace

TEST_CASE("regain --embedder re-embeds stored contents and re-judges labels", "[ingest][regain]") {
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(7);
  REQUIRE(ingest_file(p, first_batch(dir, rng)).counts[SampleStatus::accepted] == 60);
  REQUIRE(ingest_file(p, second_batch(dir, rng)).counts[SampleStatus::accepted] == 1);
  REQUIRE(status_of(p, "misplaced") == SampleStatus::label_issue);
  REQUIRE(status_of(p, "disguised") == SampleStatus::accepted);

  SECTION("labels only: the same embedding confirms ingest's decisions") {
    RejudgeReport g = p.rejudge(relabel());
    CHECK(g.judged == 62);
    CHECK(g.newly_flagged == 0);
    CHECK(g.cleared == 0);
    CHECK(g.gains_updated == 61);
    CHECK(g.embedder == "provided(dim=4)");
  }

  SECTION("a new embedder: misplaced cleared, disguised flagged, the dataset switched") {
    // A second pipeline on the same database, opened before the regain.
    winnow::test::Pipeline other(db);

    RejudgeReport g = p.rejudge(reembed(kTextEmbedder, 0.5));
    CHECK(g.previous_embedder == "provided(dim=4)");
    CHECK(g.embedder == kTextEmbedder);
    CHECK(g.re_embedded == 62);
    CHECK(g.judged == 62);
    CHECK(g.newly_flagged == 1);
    CHECK(g.cleared == 1);
    CHECK(g.gains_updated == 61);
    CHECK(status_of(p, "misplaced") == SampleStatus::accepted);
    CHECK(status_of(p, "disguised") == SampleStatus::label_issue);
    auto events = p.store().events_of(p.store().find_by_external_key("misplaced")->id);
    REQUIRE(events.size() == 2);  // ingest's flag, then regain's revisit
    CHECK(events.back().reason.find("label issue cleared") != std::string::npos);
    CHECK(events.back().reason.find(kTextEmbedder) != std::string::npos);
    CHECK(p.embedder().spec() == kTextEmbedder);
    CHECK(p.config().min_candidate_similarity == 0.5);
    CHECK(p.index_info().vectors == 62);  // every judged sample, label issues too

    // Reopened: the config names the new embedder and the saved index is fresh.
    {
      winnow::test::Pipeline reopened(db);
      CHECK(reopened.config().embedder == kTextEmbedder);
      CHECK(reopened.config().min_candidate_similarity == 0.5);
      CHECK_FALSE(reopened.index_info().rebuilt);
      CHECK(reopened.index_info().vectors == 62);
    }

    // The pipeline opened before the regain catches up at its next batch: a
    // text record without an embedding is embedded by the new embedder (the
    // provided one would have rejected it) and joins the regained index.
    const std::string m3 =
        write_manifest(dir.file("batch-3.jsonl"), {record("fresh", words(kAnimals, rng), 0, {})});
    BatchReport r3 = ingest_file(other, m3);
    CHECK(r3.counts[SampleStatus::rejected] == 0);
    CHECK(status_of(other, "fresh") == SampleStatus::accepted);
    CHECK(other.embedder().spec() == kTextEmbedder);
    CHECK(other.index_info().vectors == 63);
  }

  SECTION("a re-judgement threshold of 0 flags nothing, and is not stored") {
    RejudgeOptions o = relabel();
    o.flag_below = 0.0;
    RejudgeReport g = p.rejudge(o);
    CHECK(g.cleared == 1);  // misplaced: quality 0 is not below 0
    CHECK(status_of(p, "misplaced") == SampleStatus::accepted);
    CHECK(p.config().label_flag_below == CurationConfig{}.label_flag_below);
    o.flag_below = 1.5;
    CHECK_THROWS_WITH(p.rejudge(o), Catch::Contains("flag_below=1.5 must be in [0, 1]"));
  }

  SECTION("a new candidate floor without a new embedder is refused") {
    RejudgeOptions o = relabel();
    o.min_candidate_similarity = 0.5;
    CHECK_THROWS_WITH(p.rejudge(o), Catch::Contains("goes with a new embedder"));
  }

  SECTION("an embedder that cannot embed the stored contents changes nothing") {
    CHECK_THROWS_WITH(p.rejudge(reembed("pixels(width=2,height=2)")),
                      Catch::Contains("cannot be re-embedded with pixels"));
    CHECK(p.config().embedder == "provided(dim=4)");
    CHECK(status_of(p, "misplaced") == SampleStatus::label_issue);
    CHECK(p.index_info().vectors == 62);
    winnow::test::Pipeline reopened(db);
    CHECK(reopened.config().embedder == "provided(dim=4)");
    CHECK_FALSE(reopened.index_info().rebuilt);
    CHECK(
        reopened.store().events_of(reopened.store().find_by_external_key("disguised")->id).size() ==
        1);
  }
}

TEST_CASE("regain --consensus relabels by Dawid-Skene before judging", "[ingest][regain]") {
  // 60 records annotated by four annotators: `good` always right, `fair`
  // and `decent` each wrong on a different tenth of the records, `bad` a
  // coin flip. (With `good` and `fair` alone, nothing in the data says which
  // of the two is right where they disagree.) One more record, `tie`, has only `good`
  // (tool, 1) and `bad` (animal, 0): the majority vote ties and winnow stores
  // the smaller label, 0, which its tool neighbours contradict.
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(3);
  std::bernoulli_distribution coin(0.5);
  auto annotated = [&](const std::string& key, bool tool, int i) {
    const int truth = tool ? 1 : 0;
    const int fair = i % 10 == 0 ? 1 - truth : truth;
    const int decent = i % 10 == 5 ? 1 - truth : truth;
    const int bad = coin(rng) ? truth : 1 - truth;
    json j = {{"key", key},
              {"text", words(tool ? kTools : kAnimals, rng)},
              {"embedding", near_axis(truth, rng)},
              {"annotations",
               {{{"annotator", "good"}, {"label", std::to_string(truth)}},
                {{"annotator", "fair"}, {"label", std::to_string(fair)}},
                {{"annotator", "decent"}, {"label", std::to_string(decent)}},
                {{"annotator", "bad"}, {"label", std::to_string(bad)}}}}};
    return j.dump();
  };
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) {
    lines.push_back(annotated("animal-" + std::to_string(i), false, i));
    lines.push_back(annotated("tool-" + std::to_string(i), true, i));
  }
  REQUIRE(ingest_file(p, write_manifest(dir.file("batch-1.jsonl"), lines))
              .counts[SampleStatus::accepted] == 60);
  json tie = {{"key", "tie"},
              {"text", words(kTools, rng)},
              {"embedding", near_axis(1, rng)},
              {"annotations",
               {{{"annotator", "good"}, {"label", "1"}}, {{"annotator", "bad"}, {"label", "0"}}}}};
  ingest_file(p, write_manifest(dir.file("batch-2.jsonl"), {tie.dump()}));
  REQUIRE(p.store().find_by_external_key("tie")->label == 0);
  REQUIRE(status_of(p, "tie") == SampleStatus::label_issue);

  // Stored labels the majority vote got wrong (ties go to the smaller label).
  auto truth_of = [](const SampleRecord& x) {
    return x.external_key.rfind("animal", 0) == 0 ? 0 : 1;
  };
  std::size_t wrong_before = 0;
  p.store().for_each_sample([&](const SampleRecord& x) { wrong_before += x.label != truth_of(x); });
  REQUIRE(wrong_before >= 1);  // at least `tie`

  RejudgeOptions o;
  o.consensus = true;
  RejudgeReport r = p.rejudge(o);
  CHECK(r.relabelled == wrong_before);
  auto s = p.store().find_by_external_key("tie");
  CHECK(s->label == 1);
  CHECK(s->status == SampleStatus::accepted);
  auto events = p.store().events_of(s->id);
  REQUIRE(events.size() == 3);  // ingest (label_issue), relabel, revisit (accepted)
  CHECK(events[1].kind == "relabel");
  CHECK(events[1].reason.find("replaces 0") != std::string::npos);
  CHECK(events[2].decision == SampleStatus::accepted);
  // Every record now carries `good`'s label, the truth.
  p.store().for_each_sample([&](const SampleRecord& x) {
    INFO(x.external_key << " status " << winnow::store::to_string(x.status));
    CHECK(x.label == truth_of(x));
  });
  // A second consensus pass has nothing left to change.
  CHECK(p.rejudge(o).relabelled == 0);
}

TEST_CASE("the report rates annotators as the last consensus did, while the annotations stand",
          "[ingest][regain][report]") {
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(5);
  REQUIRE(ingest_file(p, write_manifest(dir.file("crowd.jsonl"), crowd_records(3, rng)))
              .counts[SampleStatus::accepted] == 60);
  // Before any consensus: Dawid-Skene over the annotations alone.
  json report = report::build_quality_report(p.store());
  CHECK(report["dataset"]["annotator_accuracy"]["estimated_by"] == "annotations only");

  RejudgeOptions o;
  o.consensus = true;
  const RejudgeReport r = p.rejudge(o);
  REQUIRE(r.annotator_accuracy.size() == 3);
  std::set<double> by_consensus;
  for (const auto& [id, accuracy] : r.annotator_accuracy) by_consensus.insert(accuracy);
  report = report::build_quality_report(p.store());
  CHECK(report["dataset"]["annotator_accuracy"]["estimated_by"] == "consensus");
  std::size_t rated = 0;
  for (const json& source : report["sources"]) {
    if (source["kind"] == "source") continue;
    INFO(source.dump());
    CHECK(source["accuracy_estimated_by"] == "consensus");
    CHECK(by_consensus.count(source["estimated_accuracy"].get<double>()) == 1);
    CHECK(source["annotations_only_accuracy"].is_number());
    ++rated;
  }
  CHECK(rated == 3);

  // One more annotation: the estimates are set aside until the next consensus.
  const std::string csv = dir.file("late.csv");
  std::ofstream(csv) << "item,annotator,label\nanimal-0,good,1\n";
  readers::AnnotationImporter importer(csv, {});
  const BatchReport late = p.ingest_batch("late.csv", importer.checksum(),
                                          [&](ManifestEntry& e) { return importer.next(e); });
  CHECK(late.annotation_rounds.replaced == 1);
  report = report::build_quality_report(p.store());
  CHECK(report["dataset"]["annotator_accuracy"]["estimated_by"] == "annotations only");
  CHECK_THAT(report["dataset"]["annotator_accuracy"]["line"].get<std::string>(),
             Catch::Matchers::Contains("changed since the last rejudge --consensus"));
  p.rejudge(o);
  report = report::build_quality_report(p.store());
  CHECK(report["dataset"]["annotator_accuracy"]["estimated_by"] == "consensus");
}

TEST_CASE("consensus estimates round-trip through meta and refuse another text", "[regain]") {
  ConsensusEstimates e{7, {120, 0xfedcba9876543210ull}, {{-1, 0.5}, {3, 0.985}}};
  const ConsensusEstimates back = ConsensusEstimates::from_json(e.to_json());
  CHECK(back.revision == 7);
  CHECK(back.read.annotations == 120);
  CHECK(back.read.fingerprint == e.read.fingerprint);
  CHECK(back.accuracy == e.accuracy);
  CHECK_THROWS_WITH(ConsensusEstimates::from_json("{"),
                    Catch::Matchers::Contains("curation.consensus_estimates"));
  CHECK_THROWS_WITH(ConsensusEstimates::from_json(
                        R"({"revision":1,"annotations":1,"fingerprint":"1","accuracy":{"2":1.5}})"),
                    Catch::Matchers::Contains("not in [0, 1]"));
}

TEST_CASE("regain --consensus counts the neighbours' suggested label as one more vote",
          "[ingest][regain]") {
  // 60 records annotated by `good` (always right), `decent` (wrong on a
  // tenth) and `bad` (a coin flip), then two records whose own evidence is
  // thin:
  //   bad-only   tool, annotated only by `bad`, wrongly (0): the neighbours'
  //              vote (1) outweighs an annotator worth a coin flip;
  //   plain      tool vector, label 0, no annotations: no consensus, so the
  //              label-quality rule judges it (flagged).
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(11);
  auto annotated = [&](const std::string& key, int axis, const Votes& votes) {
    const std::string text = words(axis == 1 ? kTools : kAnimals, rng);
    return annotated_record(key, text, axis, votes, rng);
  };
  const std::vector<std::string> lines = crowd_records(3, rng);
  ingest_file(p, write_manifest(dir.file("batch-1.jsonl"), lines));
  ingest_file(p, write_manifest(dir.file("batch-2.jsonl"),
                                {annotated("bad-only", 1, {{"bad", 0}}),
                                 record("plain", words(kTools, rng), 0, near_axis(1, rng))}));

  RejudgeOptions o;
  o.consensus = true;
  const RejudgeReport r = p.rejudge(o);
  // Every annotated sample has >= 5 labelled neighbours, so all 61 vote,
  // most from a neighbourhood that agrees (plain's label 0 sits among the
  // tools), and the most agreeing voter is estimated to be nearly always right.
  REQUIRE(r.neighbour_voters.size() == 3);
  std::size_t votes = 0;
  for (const auto& v : r.neighbour_voters) votes += v.votes;
  CHECK(votes == 61);
  CHECK(r.neighbour_voters[1].votes + r.neighbour_voters[2].votes >= 55);
  CHECK(r.neighbour_voters[2].accuracy > 0.9);

  auto bad_only = p.store().find_by_external_key("bad-only");
  CHECK(bad_only->label == 1);
  CHECK(bad_only->status == SampleStatus::accepted);
  const auto bad_events = p.store().events_of(bad_only->id);
  REQUIRE(bad_events.size() >= 2);
  CHECK(bad_events[1].kind == "relabel");
  CHECK(bad_events[1].reason.find("and the neighbours' vote") != std::string::npos);

  auto plain = p.store().find_by_external_key("plain");
  CHECK(plain->label == 0);  // no annotations: no consensus label
  CHECK(plain->status == SampleStatus::label_issue);

  // Every record of the first batch keeps (or gets) `good`'s label.
  p.store().for_each_sample([&](const SampleRecord& x) {
    if (x.external_key == "plain" || x.external_key == "bad-only") return;
    INFO(x.external_key);
    CHECK(x.label == (x.external_key.rfind("tool", 0) == 0 ? 1 : 0));
    CHECK(x.status == SampleStatus::accepted);
  });

  // A threshold above every posterior flags every annotated sample, each
  // with the posterior in its decision.
  o.consensus_flag_below = 1.0;
  CHECK(p.rejudge(o).newly_flagged == 61);
  const auto events = p.store().events_of(p.store().find_by_external_key("tool-4")->id);
  CHECK(events.back().decision == SampleStatus::label_issue);
  CHECK(events.back().reason.rfind("consensus posterior", 0) == 0);
  const json details = json::parse(events.back().details_json);
  CHECK(details["consensus"]["posterior"].get<double>() > 0.9);
  CHECK(details["consensus"]["neighbour_votes"] == 1);
  CHECK(details["consensus"]["annotations"] == 3);
}

TEST_CASE("consensus counts a duplicate's annotations as opinions on its original",
          "[ingest][regain]") {
  // The crowd's 60 records, `original` (a tool record only `bad` annotated,
  // wrongly: 0) and, in a later batch, `copy`: the same text, so an exact
  // duplicate, annotated by `good` (1). Alone, `original`'s consensus could
  // only follow `bad`; with its copy's opinion it follows `good`.
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(5);
  std::vector<std::string> lines = crowd_records(7, rng);
  const std::string text = words(kTools, rng);
  lines.push_back(annotated_record("original", text, 1, {{"bad", 0}}, rng));
  ingest_file(p, write_manifest(dir.file("batch-1.jsonl"), lines));
  ingest_file(p, write_manifest(dir.file("batch-2.jsonl"),
                                {annotated_record("copy", text, 1, {{"good", 1}}, rng)}));
  const auto original = p.store().find_by_external_key("original");
  const auto copy = p.store().find_by_external_key("copy");
  REQUIRE(copy->status == SampleStatus::duplicate_exact);
  REQUIRE(copy->duplicate_of == original->id);
  REQUIRE(original->label == 0);

  const ConsensusLabels c = consensus_labels(p.store());
  CHECK(c.by_sample.size() == 61);  // the originals; the copy has none of its own
  CHECK(c.by_sample.count(copy->id) == 0);
  CHECK(c.duplicate_annotations == 1);
  const SampleConsensus& o = c.by_sample.at(original->id);
  CHECK(o.label == 1);
  CHECK(o.annotations == 2);
  CHECK(o.duplicate_annotations == 1);
  CHECK(o.majority == 1);  // one vote each: the consensus breaks the tie

  // regain --consensus stores it, and says where the opinion came from.
  RejudgeOptions options;
  options.consensus = true;
  const RejudgeReport r = p.rejudge(options);
  CHECK(r.duplicate_annotations == 1);
  CHECK(p.store().find_by_external_key("original")->label == 1);
  const auto events = p.store().events_of(original->id);
  const auto relabel = std::find_if(events.begin(), events.end(),
                                    [](const EventRecord& e) { return e.kind == "relabel"; });
  REQUIRE(relabel != events.end());
  CHECK(json::parse(relabel->details_json)["consensus"]["duplicate_annotations"] == 1);
}

TEST_CASE("the consensus keeps what the annotators said by majority beside its own label",
          "[regain]") {
  // The crowd's 60 records, where `decent` is wrong on every tenth and `bad`
  // tosses a coin: on some of those the majority is wrong and the consensus,
  // which trusts `good`, is right. The majority is what the neighbours vote
  // with in rejudge --consensus, so it must stay what was said.
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  winnow::test::Pipeline p(db);
  std::mt19937 rng(3);
  ingest_file(p, write_manifest(dir.file("crowd.jsonl"), crowd_records(2, rng)));
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> said;  // sample -> label -> votes
  p.store().for_each_annotation(
      [&](const winnow::store::MetadataStore::AnnotationRow& a) { ++said[a.sample_id][a.label]; });

  const ConsensusLabels c = consensus_labels(p.store());
  REQUIRE(c.by_sample.size() == 60);
  std::size_t majority_wrong = 0;
  for (const auto& [id, sample] : c.by_sample) {
    std::int64_t most = 0;
    for (const auto& [label, votes] : said[id]) most = std::max(most, votes);
    CHECK(said[id][sample.majority] == most);  // a label most annotations give
    majority_wrong += sample.majority != sample.label;
  }
  CHECK(majority_wrong >= 1);
}

// --- ingest's own re-judging after each batch (stale_labels.cpp) ---------------

namespace {

// A dataset whose labels ingest re-judges after each batch (`growth`; 0: never),
// judged over 5 neighbours, 3 of them at least.
std::string rejudging_dataset(const winnow::test::TempDir& dir, const std::string& name,
                              double growth) {
  const std::string db = dir.file(name + ".db");
  CurationConfig config;
  config.embedder = "provided(dim=4)";
  config.label_k = 5;
  config.min_label_neighbours = 3;
  config.label_rejudge_growth = growth;
  winnow::test::Pipeline::init(db, config);
  return db;
}

// `n` records of one topic on its axis, labelled `label`, keys prefix-0...
std::vector<std::string> topic(const std::string& prefix, int n, int axis, int label,
                               std::mt19937& rng) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    lines.push_back(record(prefix + "-" + std::to_string(i),
                           words(axis == 1 ? kTools : kAnimals, rng), label, near_axis(axis, rng)));
  }
  return lines;
}

std::string last_reason(winnow::test::Pipeline& p, const std::string& key) {
  const auto events = p.store().events_of(p.store().find_by_external_key(key)->id);
  REQUIRE(!events.empty());
  return events.back().reason;
}

}  // namespace

TEST_CASE("a mislabel that came first ends flagged as one that came last", "[ingest][rejudge]") {
  // `liar` is a tool (axis 1) labelled 0 (animal). Early, with five animals
  // only, nothing contradicts it; a batch later 30 tools do.
  winnow::test::TempDir dir;
  std::mt19937 rng(5);
  const std::string liar = record("liar", words(kTools, rng), 0, near_axis(1, rng));
  std::vector<std::string> first = topic("animal", 5, 0, 0, rng);
  first.insert(first.begin(), liar);
  std::vector<std::string> second = topic("tool", 30, 1, 1, rng);
  const std::vector<std::string> more_animals = topic("more-animal", 30, 0, 0, rng);
  second.insert(second.end(), more_animals.begin(), more_animals.end());
  const std::string batch_1 = write_manifest(dir.file("first.jsonl"), first);
  const std::string batch_2 = write_manifest(dir.file("second.jsonl"), second);

  SECTION("early: re-judged after the second batch") {
    winnow::test::Pipeline p(rejudging_dataset(dir, "early", 0.5));
    ingest_file(p, batch_1);
    CHECK(status_of(p, "liar") == SampleStatus::accepted);
    const BatchReport r = ingest_file(p, batch_2);
    CHECK(status_of(p, "liar") == SampleStatus::label_issue);
    CHECK(r.labels_rejudged.rejudged >= 6);
    CHECK(r.labels_rejudged.newly_flagged == 1);
    CHECK_THAT(last_reason(p, "liar"), Catch::Matchers::Contains("re-judged against 66") &&
                                           Catch::Matchers::Contains("suggested 1"));
    // The verdict survives a reopen: the flagged index and labels come from the store.
    winnow::test::Pipeline reopened(dir.file("early.db"));
    CHECK(status_of(reopened, "liar") == SampleStatus::label_issue);
  }
  SECTION("early, without re-judging: it keeps its first verdict") {
    winnow::test::Pipeline p(rejudging_dataset(dir, "never", 0.0));
    ingest_file(p, batch_1);
    const BatchReport r = ingest_file(p, batch_2);
    CHECK(status_of(p, "liar") == SampleStatus::accepted);
    CHECK(r.labels_rejudged.rejudged == 0);
  }
  SECTION("late: flagged on arrival") {
    winnow::test::Pipeline p(rejudging_dataset(dir, "late", 0.5));
    first.erase(first.begin());
    ingest_file(p, write_manifest(dir.file("first-without.jsonl"), first));
    ingest_file(p, batch_2);
    ingest_file(p, write_manifest(dir.file("third.jsonl"), {liar}));
    CHECK(status_of(p, "liar") == SampleStatus::label_issue);
  }
}

TEST_CASE("a label issue flagged among few neighbours is cleared when more arrive",
          "[ingest][rejudge]") {
  // Axis 2 starts with six samples labelled 1 and one, `lonely`, labelled 0:
  // lonely is flagged. Forty samples labelled 0 arrive there: lonely, a
  // doubtful verdict, is cleared at once.
  winnow::test::TempDir dir;
  std::mt19937 rng(9);
  std::vector<std::string> first = topic("animal", 30, 0, 0, rng);
  const std::vector<std::string> six = topic("six", 6, 2, 1, rng);
  first.insert(first.end(), six.begin(), six.end());
  first.push_back(record("lonely", words(kAnimals, rng), 0, near_axis(2, rng)));
  const std::vector<std::string> tools = topic("tool", 30, 1, 1, rng);
  first.insert(first.end(), tools.begin(), tools.end());
  winnow::test::Pipeline p(rejudging_dataset(dir, "clear", 0.5));
  ingest_file(p, write_manifest(dir.file("first.jsonl"), first));
  REQUIRE(status_of(p, "lonely") == SampleStatus::label_issue);

  const BatchReport r =
      ingest_file(p, write_manifest(dir.file("second.jsonl"), topic("forty", 40, 2, 0, rng)));
  CHECK(status_of(p, "lonely") == SampleStatus::accepted);
  CHECK_THAT(last_reason(p, "lonely"), Catch::Matchers::StartsWith("label issue cleared"));
  CHECK(r.labels_rejudged.cleared >= 1);
  // The six, agreed with when judged (their nearest are each other), wait
  // for more growth: once the dataset has grown 1.5^6 times since, every
  // verdict is judged again, and the store then says what a full
  // re-judgement says.
  ingest_file(p, write_manifest(dir.file("third.jsonl"), topic("more", 800, 3, 3, rng)));
  RejudgeOptions options;
  options.labels = true;
  const RejudgeReport full = p.rejudge(options);
  CHECK(full.newly_flagged == 0);
  CHECK(full.cleared == 0);
}

TEST_CASE("a confident label that drift overturns is judged again after six growth steps",
          "[ingest][rejudge]") {
  // Ten `sure` samples labelled 1 on axis 2, their own nearest neighbours:
  // every one agrees, a confident verdict. Sixty labelled 0 then arrive
  // there, so that a full re-judgement would flag some of the ten.
  winnow::test::TempDir dir;
  std::mt19937 rng(11);
  std::vector<std::string> first = topic("animal", 30, 0, 0, rng);
  const std::vector<std::string> tools = topic("tool", 30, 1, 1, rng);
  const std::vector<std::string> sure = topic("sure", 10, 2, 1, rng);
  first.insert(first.end(), tools.begin(), tools.end());
  first.insert(first.end(), sure.begin(), sure.end());
  winnow::test::Pipeline p(rejudging_dataset(dir, "drift", 0.5));
  ingest_file(p, write_manifest(dir.file("first.jsonl"), first));  // 70 voters
  ingest_file(p, write_manifest(dir.file("drift.jsonl"), topic("drift", 60, 2, 0, rng)));
  auto sure_flagged = [&] {
    int flagged = 0;
    for (int i = 0; i < 10; ++i) {
      flagged += status_of(p, "sure-" + std::to_string(i)) == SampleStatus::label_issue;
    }
    return flagged;
  };
  REQUIRE(sure_flagged() == 0);

  // 400 voters: past 70 * 1.5^3, short of 70 * 1.5^6 = 797. The ten's
  // verdicts stand (the price of judging confident labels less often).
  ingest_file(p, write_manifest(dir.file("more.jsonl"), topic("more", 270, 3, 3, rng)));
  CHECK(sure_flagged() == 0);
  // 850 voters: every verdict of the first batch is due, and the store says
  // what a full re-judgement says.
  ingest_file(p, write_manifest(dir.file("most.jsonl"), topic("most", 450, 3, 3, rng)));
  CHECK(sure_flagged() >= 1);
  RejudgeOptions options;
  options.labels = true;
  const RejudgeReport full = p.rejudge(options);
  CHECK(full.newly_flagged == 0);
  CHECK(full.cleared == 0);
}

TEST_CASE("a config stored before label_rejudge_growth keeps judging online only", "[config]") {
  json stored = json::parse(CurationConfig{}.to_json());
  CHECK(stored["label_rejudge_growth"] == 0.5);
  stored.erase("label_rejudge_growth");
  CHECK(CurationConfig::from_json(stored.dump()).label_rejudge_growth == 0.0);
  stored["label_rejudge_growth"] = -1;
  CHECK_THROWS_WITH(CurationConfig::from_json(stored.dump()),
                    Catch::Matchers::Contains("label_rejudge_growth=-1"));
}

namespace {

// 1 - cosine, averaged over the kGainNeighbours vectors of `others` most
// similar to `v`: a gain as information_gain computes it.
double expected_gain(const std::vector<float>& v, const std::vector<std::vector<float>>& others) {
  auto unit = [](std::vector<float> x) {
    float norm = 0.0f;
    for (float c : x) norm += c * c;
    for (float& c : x) c /= std::sqrt(norm);
    return x;
  };
  const std::vector<float> u = unit(v);
  std::vector<double> similarities;
  for (const std::vector<float>& o : others) {
    const std::vector<float> w = unit(o);
    double dot = 0.0;
    for (std::size_t d = 0; d < u.size(); ++d) dot += static_cast<double>(u[d]) * w[d];
    similarities.push_back(dot);
  }
  std::sort(similarities.rbegin(), similarities.rend());
  double sum = 0.0;
  for (int r = 0; r < kGainNeighbours; ++r) sum += 1.0 - similarities[static_cast<std::size_t>(r)];
  return sum / kGainNeighbours;
}

}  // namespace

// A label issue stays in the one vector index: it votes and is a
// near-duplicate candidate, but a gain is taken over accepted samples only,
// at ingest and when regain recomputes the gains.
TEST_CASE("a label issue is in the index as a voter, never as a gain neighbour",
          "[ingest][regain]") {
  winnow::test::TempDir dir;
  const std::string db = provided_dataset(dir);
  std::mt19937 rng(17);
  std::vector<std::string> first;
  std::vector<std::vector<float>> accepted;  // the vectors of batch 1, all accepted
  for (int i = 0; i < 40; ++i) {
    for (const int axis : {0, 1}) {
      accepted.push_back(near_axis(axis, rng));
      first.push_back(record((axis ? "tool-" : "animal-") + std::to_string(i),
                             words(axis ? kTools : kAnimals, rng), axis, accepted.back()));
    }
  }
  // On the tool axis but between it and axis 2, labelled 0: flagged.
  const std::vector<float> misplaced = {0.2f, 0.9f, 0.35f, 0.0f};
  winnow::test::Pipeline p(db);
  BatchReport r1 = ingest_file(p, write_manifest(dir.file("first.jsonl"), first));
  REQUIRE(r1.counts[SampleStatus::accepted] == 80);
  ingest_file(p, write_manifest(dir.file("second.jsonl"),
                                {record("misplaced", words(kAnimals, rng), 0, misplaced)}));
  REQUIRE(status_of(p, "misplaced") == SampleStatus::label_issue);
  CHECK(p.index_info().vectors == 81);

  // Right beside the label issue (its nearest neighbour by far), a tool
  // record labelled 1: accepted, its gain over the four nearest accepted.
  const std::vector<float> beside = {0.2f, 0.9f, 0.36f, 0.0f};
  BatchReport r3 = ingest_file(
      p,
      write_manifest(dir.file("third.jsonl"), {record("beside", words(kTools, rng), 1, beside)}));
  REQUIRE(r3.counts[SampleStatus::accepted] == 1);
  const double want = expected_gain(beside, accepted);
  const auto stored = p.store().find_by_external_key("beside");
  REQUIRE(stored->gain);
  CHECK(*stored->gain == Approx(want).epsilon(1e-4));
  // With the label issue as a neighbour the gain would be about 3/4 of it.
  std::vector<std::vector<float>> with_issue = accepted;
  with_issue.push_back(misplaced);
  CHECK(expected_gain(beside, with_issue) < 0.8 * want);

  // regain recomputes every gain the same way, the label issue still voting
  // (it stays flagged: its 30 nearest are tools).
  RejudgeReport g = p.rejudge(relabel());
  CHECK(g.newly_flagged == 0);
  CHECK(g.cleared == 0);
  CHECK(g.gains_updated == 81);
  CHECK(status_of(p, "misplaced") == SampleStatus::label_issue);
  CHECK(*p.store().find_by_external_key("beside")->gain == Approx(want).epsilon(1e-4));
  CHECK(p.index_info().vectors == 82);
}

// More stale samples than one search call takes (4,096, stale_labels.cpp):
// the chunks are searched on the pool's threads and judged in order. Two
// axes, each with 40% of its records under the other axis's label: those
// labels are doubtful (quality below 0.5) and due again once the dataset has
// grown by half: over 5,000 re-judged after the second batch, in two calls.
// Two threads must store what one does, and what they store must be the
// judgement a full `regain --labels` makes against the same index.
TEST_CASE("re-judging over several search calls gives the verdicts of one thread",
          "[ingest][rejudge][threads]") {
  winnow::test::TempDir dir;
  std::mt19937 rng(11);
  std::bernoulli_distribution other_label(0.4);
  const auto records = [&](const std::string& prefix, int n) {
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) {
      const int axis = i % 2;
      const int label = other_label(rng) ? 1 - axis : axis;
      lines.push_back(record(prefix + std::to_string(i), words(axis ? kTools : kAnimals, rng),
                             label, near_axis(axis, rng)));
    }
    return lines;
  };
  const std::string batch_1 = write_manifest(dir.file("first.jsonl"), records("a", 9000));
  const std::string batch_2 = write_manifest(dir.file("second.jsonl"), records("b", 5000));

  using Stored = std::vector<std::tuple<std::string, SampleStatus, std::optional<double>>>;
  const auto stored = [](winnow::test::Pipeline& p) {
    Stored all;
    p.store().for_each_sample([&](const SampleRecord& s) {
      all.emplace_back(s.external_key, s.status, s.label_quality);
    });
    return all;
  };
  const auto run = [&](int threads, std::int64_t& rejudged) {
    winnow::test::Pipeline p(rejudging_dataset(dir, "threads-" + std::to_string(threads), 0.5));
    p.set_threads(threads);
    ingest_file(p, batch_1);
    rejudged = ingest_file(p, batch_2).labels_rejudged.rejudged;
    return stored(p);
  };
  std::int64_t rejudged_one = 0, rejudged_two = 0;
  const Stored one = run(1, rejudged_one);
  const Stored two = run(2, rejudged_two);
  CHECK(rejudged_one > 4096);
  CHECK(rejudged_two == rejudged_one);
  REQUIRE(one.size() == 14000);
  CHECK(two == one);

  // The first batch's doubtful labels were all judged again after the second
  // batch, against the index regain searches: the same quality.
  winnow::test::Pipeline p(dir.file("threads-2.db"));
  p.rejudge(relabel());
  const Stored regained = stored(p);
  REQUIRE(regained.size() == one.size());
  int doubtful = 0, same = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    const auto& [key, status, quality] = one[i];
    if (key[0] != 'a' || !quality || *quality >= 0.5) continue;
    ++doubtful;
    same += std::get<2>(regained[i]) == quality;
  }
  CHECK(doubtful > 2000);
  CHECK(same == doubtful);
}
