// decide() on hand-made facts: every rule of record_decision.h on its own,
// with the exact reasons and details ingest records.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "winnow/curation/judge/record_decision.h"

using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::judge;
using namespace winnow::curation::labels;
using nlohmann::json;

namespace {

DecisionRules rules() {
  DecisionRules r;
  r.candidate_margin = 0.05;
  r.min_label_neighbours = 3;
  r.label_k = 4;
  return r;
}

Candidate candidate() {
  Candidate c;
  c.key = "k7";
  c.line = 7;
  c.content_hash = "abc";
  return c;
}

// An embedded record with `neighbours` neighbours and gain 0.25.
Neighbourhood neighbourhood(std::size_t neighbours = 5) {
  Neighbourhood n;
  n.gain = 0.25;
  n.neighbours = neighbours;
  return n;
}

NearDuplicateMatch match(bool found, double similarity) {
  NearDuplicateMatch m;
  m.found = found;
  m.id = found ? 42 : -1;
  m.similarity = similarity;
  m.candidate_similarity = 0.995;
  m.candidates_checked = 2;
  m.threshold = 0.99;
  m.min_candidate_similarity = 0.98;
  m.candidates = 10;
  return m;
}

// Label quality 0.05 over `neighbours` labelled neighbours (flagged below
// 0.1), suggesting label 3 named "cat", with `support` samples of the label.
Neighbourhood with_label(std::size_t neighbours, std::int64_t support) {
  Neighbourhood n = neighbourhood();
  LabelQualityResult q;
  q.quality = 0.05;
  q.flagged = true;
  q.neighbours = neighbours;
  q.suggested_label = 3;
  q.suggested_share = 0.9;
  q.k = 15;
  q.flag_below = 0.1;
  n.label_quality = q;
  n.label_support = support;
  n.suggested_label = "cat";
  return n;
}

}  // namespace

TEST_CASE("a record refused by the reader or with a taken key is rejected", "[decide]") {
  Candidate c = candidate();
  c.rejection = "key 'k7' is already in the dataset";
  c.exact_duplicate_of = 3;  // a rejection comes first
  const Decision d = decide(c, neighbourhood(), rules());
  CHECK(d.status == SampleStatus::rejected);
  CHECK_FALSE(d.duplicate_of);
  CHECK(d.reason == "key 'k7' is already in the dataset");
  CHECK(d.details_json == R"({"key":"k7","line":7})");
}

TEST_CASE("a record without content is accepted unchecked, unless its key is taken", "[decide]") {
  Candidate c = candidate();
  c.annotations_only = true;
  Decision d = decide(c, {}, rules());
  CHECK(d.status == SampleStatus::accepted);
  CHECK(d.reason == kAnnotationsOnlyReason);
  CHECK(d.details_json == R"({"annotations_only":true,"line":7})");

  c.rejection = "key 'k7' is already in the dataset";
  d = decide(c, {}, rules());
  CHECK(d.status == SampleStatus::rejected);
  CHECK(d.reason == "key 'k7' is already in the dataset");
}

TEST_CASE("a record the embedder refused is rejected, unless it is an exact copy", "[decide]") {
  Candidate c = candidate();
  c.embed_error = "image is 27x28, expected 28x28";
  Decision d = decide(c, {}, rules());
  CHECK(d.status == SampleStatus::rejected);
  CHECK(d.reason == "cannot embed: image is 27x28, expected 28x28");
  CHECK(d.details_json == R"({"key":"k7","line":7})");

  c.exact_duplicate_of = 12;
  d = decide(c, {}, rules());
  CHECK(d.status == SampleStatus::duplicate_exact);
}

TEST_CASE("an exact copy points at its original", "[decide]") {
  Candidate c = candidate();
  c.exact_duplicate_of = 12;
  const Decision d = decide(c, neighbourhood(), rules());
  CHECK(d.status == SampleStatus::duplicate_exact);
  CHECK(d.duplicate_of == 12);
  CHECK(d.reason == "same content hash as sample 12");
  CHECK(d.details_json == R"({"content_hash":"abc","line":7})");
}

TEST_CASE("a verified candidate at the threshold makes a near duplicate", "[decide]") {
  Neighbourhood n = with_label(5, 100);  // label quality is not looked at
  n.near_duplicate = match(true, 0.9931);
  const Decision d = decide(candidate(), n, rules());
  CHECK(d.status == SampleStatus::duplicate_near);
  CHECK(d.duplicate_of == 42);
  CHECK(d.reason == "similarity 0.9931 to sample 42 >= threshold 0.99");
  CHECK(d.details_json ==
        R"({"gain":0.25,"gain_k":4,"neighbours":5,"near_duplicate":{"threshold":0.99,)"
        R"("min_candidate_similarity":0.98,"candidate_margin":0.05,"candidates":10,)"
        R"("candidates_checked":2,"candidates_ruled_out":0,"best_similarity":0.9931,)"
        R"("best_candidate_similarity":0.995,"duplicate_of":42}})");
  CHECK(json::parse(d.details_json).is_object());
}

TEST_CASE("candidates below the threshold leave the record accepted", "[decide]") {
  Neighbourhood n = neighbourhood();
  n.near_duplicate = match(false, 0.97);
  const Decision d = decide(candidate(), n, rules());
  CHECK(d.status == SampleStatus::accepted);
  CHECK_FALSE(d.duplicate_of);
  CHECK(d.reason == "accepted (gain 0.2500)");
  CHECK(d.details_json ==
        R"({"gain":0.25,"gain_k":4,"neighbours":5,"near_duplicate":{"threshold":0.99,)"
        R"("min_candidate_similarity":0.98,"candidate_margin":0.05,"candidates":10,)"
        R"("candidates_checked":2,"candidates_ruled_out":0,"best_similarity":0.97,)"
        R"("best_candidate_similarity":0.995}})");
}

TEST_CASE("a label its neighbours disagree with is a label issue", "[decide]") {
  const Decision d = decide(candidate(), with_label(3, 4), rules());
  CHECK(d.status == SampleStatus::label_issue);
  CHECK_FALSE(d.duplicate_of);
  CHECK(d.reason == "label quality 0.050 < 0.1 over 3 neighbours (suggested cat)");
  CHECK(d.details_json ==
        R"({"gain":0.25,"gain_k":4,"neighbours":5,"label_quality":{"quality":0.05,)"
        R"("neighbours":3,"k":15,"flag_below":0.1,"min_neighbours":3,)"
        R"("suggested_label":"cat","suggested_share":0.9,"label_support":4,)"
        R"("class_lift":0,"min_lift":0}})");
}

TEST_CASE("too few labelled neighbours never flag a label", "[decide]") {
  const Decision d = decide(candidate(), with_label(2, 100), rules());
  CHECK(d.status == SampleStatus::accepted);
  CHECK(d.reason == "accepted (gain 0.2500)");
  CHECK(json::parse(d.details_json)["label_quality"]["neighbours"] == 2);
}

TEST_CASE("a class with fewer than label_k accepted samples is not judged yet", "[decide]") {
  const Decision d = decide(candidate(), with_label(10, 3), rules());
  CHECK(d.status == SampleStatus::accepted);
  CHECK(json::parse(d.details_json)["label_quality"]["label_support"] == 3);
}

TEST_CASE("an unremarkable record is accepted with its gain", "[decide]") {
  Neighbourhood n = neighbourhood(0);
  n.gain = 1.0;
  const Decision d = decide(candidate(), n, rules());
  CHECK(d.status == SampleStatus::accepted);
  CHECK(d.reason == "accepted (gain 1.0000)");
  CHECK(d.details_json == R"({"gain":1,"gain_k":4,"neighbours":0})");
}
