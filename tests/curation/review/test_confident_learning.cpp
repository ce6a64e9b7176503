// Confident learning: hand-computed small cases of every step, a planted-noise
// recovery, degenerate inputs, and `winnow ingest --pred-probs` over a real
// database.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/curation_test_helpers.h"
#include "support/temp_dir.h"
#include "winnow/curation/labels/confident_learning.h"
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
using namespace winnow::curation::labels;

std::vector<std::int64_t> counts(std::initializer_list<std::int64_t> v) {
  return v;
}

std::vector<std::size_t> flagged(const ConfidentLearningResult& r) {
  std::vector<std::size_t> out;
  for (std::size_t n = 0; n < r.is_label_issue.size(); ++n) {
    if (r.is_label_issue[n]) out.push_back(n);
  }
  return out;
}

// Ten samples of three classes; sample 2 (given 0) looks like class 1,
// sample 6 (given 1) like class 2; samples 3, 8 and 9 are confident in nothing.
const std::vector<int> kLabels = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
const std::vector<float> kProbs = {
    0.8f,  0.1f,  0.1f,   // 0
    0.6f,  0.3f,  0.1f,   // 1
    0.1f,  0.8f,  0.1f,   // 2: counted as 1
    0.45f, 0.48f, 0.07f,  // 3: below t0 and t1
    0.1f,  0.7f,  0.2f,   // 4
    0.2f,  0.6f,  0.2f,   // 5
    0.1f,  0.2f,  0.7f,   // 6: counted as 2
    0.1f,  0.1f,  0.8f,   // 7
    0.2f,  0.2f,  0.6f,   // 8: below t2
    0.45f, 0.1f,  0.45f,  // 9: below t0 and t2; argmax tie includes the given 2
};

}  // namespace

TEST_CASE("confident learning: thresholds are per-class mean self-confidence", "[cl]") {
  const std::vector<double> t = confident_thresholds(kLabels, kProbs, 3);
  REQUIRE(t.size() == 3);
  CHECK(t[0] == Approx((0.8 + 0.6 + 0.1 + 0.45) / 4));  // 0.4875
  CHECK(t[1] == Approx((0.7 + 0.6 + 0.2) / 3));         // 0.5
  CHECK(t[2] == Approx((0.8 + 0.6 + 0.45) / 3));        // 0.6167
  // A class nobody was given can never be confident.
  CHECK(confident_thresholds({0, 0}, {0.7f, 0.3f, 0.9f, 0.1f}, 2)[1] == 2.0);
}

TEST_CASE("confident learning: the confident joint's counting rules", "[cl]") {
  // Thresholds given, to exercise each rule directly.
  const std::vector<double> t = {0.3, 0.3, 0.5};
  const std::vector<int> labels = {0, 0, 1, 1, 2, 2, 0};
  const std::vector<float> probs = {
      0.4f,  0.5f,  0.1f,   // confident in 0 and 1: the more probable, 1
      0.35f, 0.35f, 0.3f,   // confident in 0 and 1, tied: the given label 0
      0.2f,  0.2f,  0.6f,   // only 2
      0.28f, 0.28f, 0.44f,  // none: not counted
      0.1f,  0.3f,  0.6f,   // 1 and 2: 2
      0.6f,  0.1f,  0.3f,   // only 0
      0.32f, 0.31f, 0.37f,  // 0 and 1 (2 is the overall argmax but below t2): 0
  };
  std::vector<int> counted_as;
  const ClassCounts c = confident_joint(labels, probs, 3, t, &counted_as);
  // Row 1's diagonal had no sample and is forced to 1.
  CHECK(c.counts == counts({2, 1, 0, 0, 1, 1, 1, 0, 1}));
  CHECK(counted_as == std::vector<int>{1, 0, 2, -1, 2, 0, 0});
  CHECK(c.off_diagonal_total() == 3);
}

TEST_CASE("confident learning: calibration keeps row totals, rounding by largest remainder",
          "[cl]") {
  CHECK(round_preserving_total({1.6, 1.6, 0.8}) == counts({2, 1, 1}));
  CHECK(round_preserving_total({1.4, 1.4, 1.2}) == counts({2, 1, 1}));
  CHECK(round_preserving_total({0.0, 1.5, 1.5}) == counts({0, 2, 1}));  // ties: lower index

  const ClassCounts c{3, {2, 1, 0, 0, 1, 1, 1, 0, 1}};
  const ClassCounts cal = calibrate_confident_joint(c, {5, 3, 4});
  // Row 0: (2,1,0) * 5/3 = (3.33, 1.67, 0) -> (3, 2, 0); row 1: (0, 1.5, 1.5)
  // -> (0, 2, 1); row 2: (1,0,1) * 2 = (2, 0, 2).
  CHECK(cal.counts == counts({3, 2, 0, 0, 2, 1, 2, 0, 2}));
  CHECK(cal.row_total(0) == 5);
  CHECK(cal.row_total(1) == 3);
  CHECK(cal.row_total(2) == 4);

  // Prune counts: the off-diagonal, less what min_examples_per_class keeps.
  CHECK(prune_counts(cal, 1, 1.0).counts == counts({0, 2, 0, 0, 0, 1, 2, 0, 0}));
  // Keep 3: row 1 (diagonal 2) gives up its 1 noise count, row 2 (diagonal 2) one of its 2.
  CHECK(prune_counts(cal, 3, 1.0).counts == counts({0, 2, 0, 0, 0, 0, 1, 0, 0}));
  // Keep 5: row 0 (n = 5) can flag nothing.
  CHECK(prune_counts(cal, 5, 1.0).row_total(0) == 0);
  CHECK(prune_counts(cal, 1, 0.5).counts == counts({0, 1, 0, 0, 0, 1, 1, 0, 0}));
  CHECK_THROWS_AS(prune_counts(cal, 1, 1.5), winnow::Error);
}

TEST_CASE("confident learning: find_label_issues end to end on ten samples", "[cl]") {
  const ConfidentLearningResult r = find_label_issues(kLabels, kProbs, 3);
  // C = [[2,1,0],[0,2,1],[0,0,1]]: samples 3, 8, 9 are not counted.
  CHECK(r.confident_joint.counts == counts({2, 1, 0, 0, 2, 1, 0, 0, 1}));
  CHECK(r.num_label_issues == 2);
  // Row 0: (2,1,0) * 4/3 -> (3,1,0); row 2: (0,0,1) * 3 -> (0,0,3).
  CHECK(r.calibrated_joint.counts == counts({3, 1, 0, 0, 2, 1, 0, 0, 3}));
  CHECK(r.label_counts == counts({4, 3, 3}));
  CHECK(r.num_label_issues_calibrated == 2);
  CHECK(r.joint[1] == Approx(0.1));
  double total = 0.0;
  for (double q : r.joint) total += q;
  CHECK(total == Approx(1.0));
  CHECK(flagged(r) == std::vector<std::size_t>{2, 6});
  CHECK(r.predicted_label[2] == 1);
  CHECK(r.predicted_label[6] == 2);
  CHECK(r.predicted_label[9] == 2);  // tie 0/2 goes to the given label
  CHECK(r.label_quality[2] == Approx(0.1));
  CHECK(r.label_quality[0] == Approx(0.8));

  ConfidentLearningOptions o;
  o.filter_by = LabelIssueFilter::predicted_neq_given;
  CHECK(flagged(find_label_issues(kLabels, kProbs, 3, o)) == std::vector<std::size_t>{2, 3, 6});
  o.filter_by = LabelIssueFilter::prune_by_noise_rate;
  o.quality = LabelQualityMethod::normalized_margin;
  const ConfidentLearningResult m = find_label_issues(kLabels, kProbs, 3, o);
  CHECK(m.label_quality[2] == Approx((0.1 - 0.8 + 1) / 2));
  CHECK(m.label_quality[9] == Approx(0.5));
}

TEST_CASE("confident learning: the five filters differ where they should", "[cl]") {
  // Class 0 holds A (unsure, leaning 2, not confident anywhere) and B
  // (confident in 1). P[0][1] = 1: by noise rate the largest p1 - p0 is B; by
  // class the smallest p0 is A.
  const std::vector<int> labels = {0, 0, 0, 0, 1, 1, 2, 2};
  const std::vector<float> probs = {
      0.9f,  0.05f, 0.05f,  // 0
      0.8f,  0.1f,  0.1f,   // 1
      0.2f,  0.3f,  0.5f,   // 2: A
      0.25f, 0.75f, 0.0f,   // 3: B
      0.1f,  0.7f,  0.2f,   // 4
      0.2f,  0.6f,  0.2f,   // 5
      0.1f,  0.1f,  0.8f,   // 6
      0.05f, 0.05f, 0.9f,   // 7
  };
  auto run = [&](LabelIssueFilter f) {
    ConfidentLearningOptions o;
    o.filter_by = f;
    return find_label_issues(labels, probs, 3, o);
  };
  const ConfidentLearningResult r = run(LabelIssueFilter::prune_by_noise_rate);
  CHECK(r.prune_counts.counts == counts({0, 1, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(flagged(r) == std::vector<std::size_t>{3});
  CHECK(flagged(run(LabelIssueFilter::prune_by_class)) == std::vector<std::size_t>{2});
  CHECK(flagged(run(LabelIssueFilter::both)).empty());
  CHECK(flagged(run(LabelIssueFilter::confident_learning)) == std::vector<std::size_t>{3});
  CHECK(flagged(run(LabelIssueFilter::predicted_neq_given)) == std::vector<std::size_t>{2, 3});

  CHECK(parse_label_issue_filter("both") == LabelIssueFilter::both);
  CHECK_THROWS_AS(parse_label_issue_filter("prune"), winnow::Error);
  CHECK(parse_label_quality_method("normalized_margin") == LabelQualityMethod::normalized_margin);
  CHECK_THROWS_AS(parse_label_quality_method("entropy"), winnow::Error);
}

TEST_CASE("confident learning: planted class-conditional noise is recovered", "[cl]") {
  // 4 classes, 4000 samples, true labels uniform. Noise matrix: 20% of class
  // 0 given as 1, 15% of class 2 given as 3, the rest untouched. The model
  // sees the TRUE class: logits 2.5 on it plus N(0, 1) noise on every class
  // (about 90% accurate), so its probabilities are out-of-sample by design.
  const int k = 4;
  const std::size_t n = 4000;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> cls(0, k - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<int> truth(n), given(n);
  std::vector<float> probs(n * k);
  std::size_t flips = 0;
  for (std::size_t i = 0; i < n; ++i) {
    truth[i] = cls(rng);
    given[i] = truth[i];
    const double flip = u(rng);
    if (truth[i] == 0 && flip < 0.20) given[i] = 1;
    if (truth[i] == 2 && flip < 0.15) given[i] = 3;
    flips += given[i] != truth[i];
    double z[4], total = 0.0;
    for (int j = 0; j < k; ++j) {
      z[j] = std::exp((j == truth[i] ? 2.5 : 0.0) + noise(rng));
      total += z[j];
    }
    for (int j = 0; j < k; ++j) probs[i * k + j] = static_cast<float>(z[j] / total);
  }
  REQUIRE(flips > 250);  // about 0.25 * 4000 * (0.20 + 0.15) = 350

  const ConfidentLearningResult r = find_label_issues(given, probs, k);
  std::size_t tp = 0, fp = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (r.is_label_issue[i]) (given[i] != truth[i] ? tp : fp) += 1;
  }
  const double precision = double(tp) / double(tp + fp);
  const double recall = double(tp) / double(flips);
  INFO("flips " << flips << " tp " << tp << " fp " << fp << " issues " << r.num_label_issues);
  // The bounds leave room for the model's ~10% errors on clean samples,
  // spread over 12 off-diagonal cells, against two planted cells of 150-200.
  CHECK(precision >= 0.75);
  CHECK(recall >= 0.60);
  // The count estimate lands near the planted count.
  CHECK(r.num_label_issues >= static_cast<std::int64_t>(0.6 * flips));
  CHECK(r.num_label_issues <= static_cast<std::int64_t>(1.5 * flips));
  // The planted cells dominate the calibrated joint's off-diagonal: (given 1,
  // true 0) and (given 3, true 2) are the two largest.
  const std::int64_t c10 = r.calibrated_joint.at(1, 0), c32 = r.calibrated_joint.at(3, 2);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      if (i == j || (i == 1 && j == 0) || (i == 3 && j == 2)) continue;
      CHECK(r.calibrated_joint.at(i, j) < std::min(c10, c32));
    }
  }
}

TEST_CASE("confident learning: degenerate and bad inputs", "[cl]") {
  // One class: nothing to confuse it with.
  CHECK_THROWS_WITH(find_label_issues({0, 0}, {1.0f, 1.0f}, 1),
                    Catch::Contains("at least 2 classes"));
  // A class never given: threshold 2, an empty calibrated row, never suggested by C.
  {
    const ConfidentLearningResult r =
        find_label_issues({0, 0, 1}, {0.9f, 0.1f, 0.0f, 0.8f, 0.2f, 0.0f, 0.1f, 0.9f, 0.0f}, 3);
    CHECK(r.thresholds[2] == 2.0);
    CHECK(r.calibrated_joint.row_total(2) == 0);
    CHECK(r.confident_joint.at(2, 2) == 1);  // forced diagonal
    CHECK(r.num_flagged() == 0);
  }
  // All probabilities equal: every class confident everywhere, ties go to the
  // given label, so nothing is off the diagonal and nothing is flagged.
  {
    const std::vector<float> flat(6 * 3, 1.0f / 3.0f);
    const ConfidentLearningResult r = find_label_issues({0, 1, 2, 0, 1, 2}, flat, 3);
    CHECK(r.num_label_issues == 0);
    CHECK(r.num_flagged() == 0);
    CHECK(r.confident_joint.counts == counts({2, 0, 0, 0, 2, 0, 0, 0, 2}));
    CHECK(r.label_quality[0] == Approx(1.0 / 3.0));
  }
  // No samples: a defined, empty result.
  CHECK(find_label_issues({}, {}, 2).num_flagged() == 0);
  // Bad rows are named.
  CHECK_THROWS_WITH(find_label_issues({0, 1}, {0.5f, 0.5f, NAN, 0.5f}, 2),
                    Catch::Contains("row 1 class 0 is not finite"));
  CHECK_THROWS_WITH(find_label_issues({0, 1}, {0.5f, 0.5f, -0.1f, 1.1f}, 2),
                    Catch::Contains("row 1 class 0 is negative"));
  CHECK_THROWS_WITH(find_label_issues({0, 1}, {0.5f, 0.5f, 0.6f, 0.6f}, 2),
                    Catch::Contains("row 1 sums to 1.2"));
  CHECK_THROWS_WITH(find_label_issues({0, 2}, {0.5f, 0.5f, 0.5f, 0.5f}, 2),
                    Catch::Contains("label of row 1 is 2"));
  CHECK_THROWS_WITH(find_label_issues({0, 1}, {0.5f, 0.5f, 0.5f}, 2),
                    Catch::Contains("expected 2 labels x 2 classes"));
  // Within the 1e-3 tolerance is accepted as is.
  CHECK_NOTHROW(find_label_issues({0, 1}, {0.5f, 0.5004f, 0.5f, 0.5f}, 2));
}

// --- through a real database -------------------------------------------------

namespace {

using winnow::curation::test::fashion_test;

std::string write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const auto& l : lines) f << l << "\n";
  return path;
}

std::string image_line(const ManifestRecord& r, const std::string& key, const std::string& label) {
  return json{{"key", key},
              {"pixels", r.pixels},
              {"width", r.width},
              {"height", r.height},
              {"label", label}}
      .dump();
}

std::string probs_line(const std::string& key, double p_first) {
  return json{{"key", key}, {"pred_probs", {p_first, 1.0 - p_first}}}.dump();
}

struct Run {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Run run_cli(const winnow::test::TempDir& dir, const std::string& args) {
  const std::string cmd = std::string(WINNOW_CLI_PATH) + " " + args + " > " + dir.file("cli.out") +
                          " 2> " + dir.file("cli.err");
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.file("cli.out")),
          slurp(dir.file("cli.err"))};
}

}  // namespace

TEST_CASE("winnow ingest --pred-probs: confident learning revisits decisions", "[cl][cli]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("cl.db");
  // Manifest 1: 40 trousers (1) and 40 sneakers (7), interleaved, then
  // "cl-target", a trouser labelled 1 that kNN accepts but whose predicted
  // probabilities say 7. Manifest 2: "mislabelled", a trouser labelled 7 that
  // kNN flags (in a later batch, once label 7 is established).
  std::vector<const ManifestRecord*> trousers, sneakers;
  for (const ManifestRecord& r : fashion_test()) {
    if (r.label == "1" && trousers.size() < 42) trousers.push_back(&r);
    if (r.label == "7" && sneakers.size() < 40) sneakers.push_back(&r);
  }
  REQUIRE(trousers.size() == 42);
  std::vector<std::string> manifest, probs = {R"({"classes": ["1", "7"]})"};
  for (std::size_t i = 0; i < 40; ++i) {
    const double confidence = 0.7 + 0.25 * static_cast<double>(i % 5) / 4.0;  // 0.7 .. 0.95
    manifest.push_back(image_line(*trousers[i], "t" + std::to_string(i), "1"));
    manifest.push_back(image_line(*sneakers[i], "s" + std::to_string(i), "7"));
    probs.push_back(probs_line("t" + std::to_string(i), confidence));
    probs.push_back(probs_line("s" + std::to_string(i), 1.0 - confidence));
  }
  manifest.push_back(image_line(*trousers[41], "cl-target", "1"));
  probs.push_back(probs_line("cl-target", 0.05));
  probs.push_back(probs_line("mislabelled", 0.95));
  const std::string m =
      write_lines(dir.file("m1.jsonl"), manifest) + " " +
      write_lines(dir.file("m2.jsonl"), {image_line(*trousers[40], "mislabelled", "7")});
  const std::string p = write_lines(dir.file("p.jsonl"), probs);
  // Labels judged once 30 samples carry them: the classes here have 40.
  REQUIRE(run_cli(dir, "init --db " + db + " --label-k 30").rc == 0);

  // Bad pred-probs files fail before anything is written, naming the line.
  const std::string unknown =
      write_lines(dir.file("unknown.jsonl"), {probs_line("t0", 0.9), probs_line("nobody", 0.5)});
  Run bad = run_cli(dir, "ingest --db " + db + " --pred-probs " + unknown + " " + m);
  CHECK(bad.rc == 1);
  CHECK(bad.err.find("line 2: key 'nobody' is neither in the database nor in a manifest") !=
        std::string::npos);
  const std::string wrong_k = write_lines(
      dir.file("k.jsonl"), {probs_line("t0", 0.9), R"({"key":"t1","pred_probs":[0.2,0.3,0.5]})"});
  bad = run_cli(dir, "ingest --db " + db + " --pred-probs " + wrong_k + " " + m);
  CHECK(bad.rc == 1);
  CHECK(bad.err.find("line 2: key 't1' has 3 probabilities, expected K = 2") != std::string::npos);
  // JSON cannot hold NaN or infinities: such a line is not JSON at all.
  const std::string infinite = write_lines(
      dir.file("inf.jsonl"), {probs_line("t0", 0.9), R"({"key":"t1","pred_probs":[1e999, 0]})"});
  bad = run_cli(dir, "ingest --db " + db + " --pred-probs " + infinite + " " + m);
  CHECK(bad.rc == 1);
  CHECK(bad.err.find("line 2: not valid JSON") != std::string::npos);
  const std::string negative =
      write_lines(dir.file("neg.jsonl"), {R"({"key":"t0","pred_probs":[1.5, -0.5]})"});
  bad = run_cli(dir, "ingest --db " + db + " --pred-probs " + negative + " " + m);
  CHECK(bad.rc == 1);
  CHECK(bad.err.find("line 1: key 't0' class 1 is -0.5, not a finite probability >= 0") !=
        std::string::npos);
  const std::string not_a_class =
      write_lines(dir.file("c.jsonl"), {R"({"classes": ["1", "9"]})", probs_line("s0", 0.5)});
  bad = run_cli(dir, "ingest --db " + db + " --pred-probs " + not_a_class + " " + m);
  CHECK(bad.rc == 1);
  CHECK(bad.err.find("line 2: key 's0' has label '7', which is not one of the 2 classes") !=
        std::string::npos);
  CHECK(run_cli(dir, "ingest --db " + db + " --pred-probs " + p + " --filter-by nope " + m).rc ==
        1);
  {
    winnow::test::Pipeline pipeline(db);
    CHECK(pipeline.store().count_by_status().total() == 0);
  }

  Run ok = run_cli(dir, "ingest --db " + db + " --pred-probs " + p + " " + m);
  REQUIRE(ok.rc == 0);
  // One batch line and one confident-learning line per manifest.
  std::istringstream lines(ok.out);
  std::vector<json> out;
  for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
  REQUIRE(out.size() == 4);
  CHECK(out[0]["counts"]["label_issue"] == 0);
  const json cl1 = out[1]["confident_learning"];
  CHECK(cl1["samples"] == 81);
  CHECK(cl1["flagged"] == 1);
  CHECK(cl1["newly_flagged"] == 1);  // cl-target
  CHECK(cl1["confirmed"] == 0);
  CHECK(cl1["unused_rows"] == 1);  // "mislabelled" is not ingested yet
  CHECK(cl1["filter_by"] == "prune_by_noise_rate");
  CHECK(out[2]["counts"]["label_issue"] == 1);  // kNN: "mislabelled"
  const json cl2 = out[3]["confident_learning"];
  CHECK(cl2["samples"] == 82);
  CHECK(cl2["flagged"] == 2);
  CHECK(cl2["newly_flagged"] == 0);  // cl-target was flagged by batch 1's run
  CHECK(cl2["confirmed"] == 1);      // "mislabelled" now carries CL's reason
  CHECK(cl2["num_label_issues"] == 2);
  CHECK(cl2["unused_rows"] == 0);

  winnow::test::Pipeline pipeline(db);
  CHECK_FALSE(pipeline.index_info().rebuilt);  // saved with the revised fingerprint
  // Every judged sample: cl-target and "mislabelled" stay in the index as
  // label issues (they keep their votes).
  CHECK(pipeline.index_info().vectors == 82);
  const auto target = pipeline.store().find_by_external_key("cl-target");
  REQUIRE(target);
  CHECK(target->status == SampleStatus::label_issue);
  CHECK(*target->label_quality == Approx(0.05).margin(1e-6));  // CL's self-confidence
  const auto events = pipeline.store().events_of(target->id);
  REQUIRE(events.size() == 2);
  CHECK(events[0].decision == SampleStatus::accepted);
  CHECK(events[1].kind == "revisit");
  CHECK(events[1].reason ==
        "confident learning: given 1, suggested 7, self-confidence 0.050 (prune_by_noise_rate)");
  const json details = json::parse(events[1].details_json)["confident_learning"];
  // t_1 = (8 x (0.7 + 0.7625 + 0.825 + 0.8875 + 0.95) + 0.05) / 41, t_7 = 33 / 40.
  CHECK(details["thresholds"]["1"].get<double>() == Approx(33.05 / 41));
  CHECK(details["thresholds"]["7"].get<double>() == Approx(33.0 / 40));
  CHECK(details["suggested"] == "7");

  const auto knn = pipeline.store().find_by_external_key("mislabelled");
  REQUIRE(knn);
  CHECK(knn->status == SampleStatus::label_issue);
  CHECK(pipeline.store().events_of(knn->id).back().reason.rfind("confident learning: given 7", 0) ==
        0);
  // Unflagged samples keep their status; their label quality is CL's score.
  const auto t3 = pipeline.store().find_by_external_key("t3");
  CHECK(t3->status == SampleStatus::accepted);
  CHECK(*t3->label_quality == Approx(0.7 + 0.25 * 3 / 4.0).margin(1e-6));

  // Running it again (manifests skipped) flags nothing new and writes no event.
  Run again = run_cli(dir, "ingest --db " + db + " --pred-probs " + p + " " + m);
  REQUIRE(again.rc == 0);
  CHECK(again.out.find("\"newly_flagged\":0") != std::string::npos);
  CHECK(again.out.find("\"confirmed\":0") != std::string::npos);
  winnow::test::Pipeline reopened(db);
  CHECK(reopened.store().events_of(target->id).size() == 2);
}
