// Dawid-Skene EM on simulated annotators of known accuracy over real
// Fashion-MNIST labels, and on degenerate input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "support/curation_test_helpers.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::labels;

namespace {

constexpr int kClasses = 10;

struct Simulation {
  std::vector<int> truth;
  CrowdLabels labels;
  std::vector<double> realised_accuracy;  // share of each annotator's labels that are right
};

// `per_item` distinct annotators (chosen uniformly) label every item; a wrong
// label is uniform among the other classes.
Simulation simulate(const std::vector<int>& truth, const std::vector<double>& accuracy,
                    std::size_t per_item, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::uniform_int_distribution<int> other(0, kClasses - 2);
  Simulation sim;
  sim.truth = truth;
  sim.labels.classes = kClasses;
  sim.labels.annotators = accuracy.size();
  std::vector<double> right(accuracy.size(), 0.0), total(accuracy.size(), 0.0);
  std::vector<int> pool(accuracy.size());
  for (int t : truth) {
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<std::pair<int, int>> answers;
    for (std::size_t j = 0; j < per_item; ++j) {
      const int w = pool[j];
      int label = t;
      if (coin(rng) >= accuracy[static_cast<std::size_t>(w)]) {
        const int o = other(rng);
        label = o >= t ? o + 1 : o;
      }
      answers.emplace_back(w, label);
      right[static_cast<std::size_t>(w)] += label == t ? 1.0 : 0.0;
      total[static_cast<std::size_t>(w)] += 1.0;
    }
    sim.labels.add_item(answers);
  }
  for (std::size_t w = 0; w < accuracy.size(); ++w) {
    sim.realised_accuracy.push_back(right[w] / total[w]);
  }
  return sim;
}

double accuracy_of(const std::vector<int>& predicted, const std::vector<int>& truth) {
  double right = 0.0;
  for (std::size_t i = 0; i < truth.size(); ++i) right += predicted[i] == truth[i] ? 1.0 : 0.0;
  return right / static_cast<double>(truth.size());
}

std::vector<int> fashion_labels(std::size_t n) {
  const std::vector<std::uint8_t> all = winnow::dataset::read_idx_labels(test::kFashionTestLabels);
  return std::vector<int>(all.begin(), all.begin() + static_cast<long>(n));
}

bool all_finite(const std::vector<double>& values) {
  for (double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("Dawid-Skene: 5 simulated annotators over 2,000 Fashion-MNIST items", "[dawid_skene]") {
  const std::vector<double> accuracy = {0.95, 0.9, 0.8, 0.6, 0.35};
  const Simulation sim = simulate(fashion_labels(2000), accuracy, 3, 2024);
  REQUIRE(sim.labels.items() == 2000);
  REQUIRE(sim.labels.annotations() == 6000);

  const DawidSkeneResult ds = dawid_skene(sim.labels);
  CHECK(ds.converged);
  CHECK(ds.iterations < 100);
  CHECK(ds.final_change <= 1e-5);
  for (std::size_t w = 0; w < accuracy.size(); ++w) {
    INFO("annotator " << w << ": true " << accuracy[w] << ", realised " << sim.realised_accuracy[w]
                      << ", estimated " << ds.expected_accuracy[w]);
    CHECK(std::abs(ds.expected_accuracy[w] - accuracy[w]) < 0.03);
    CHECK(std::abs(ds.expected_accuracy[w] - sim.realised_accuracy[w]) < 0.03);
  }
  // The estimates rank the annotators as their true accuracies do.
  for (std::size_t w = 0; w + 1 < accuracy.size(); ++w) {
    CHECK(ds.expected_accuracy[w] > ds.expected_accuracy[w + 1]);
  }
  // Fashion-MNIST's test labels are balanced: the priors are about 0.1.
  for (double p : ds.priors) CHECK(p == Approx(0.1).margin(0.02));

  const double consensus_accuracy = accuracy_of(ds.consensus, sim.truth);
  const double majority_accuracy = accuracy_of(majority_vote(sim.labels), sim.truth);
  INFO("Dawid-Skene " << consensus_accuracy << " vs majority vote " << majority_accuracy);
  CHECK(consensus_accuracy > majority_accuracy);
  CHECK(consensus_accuracy > 0.9);

  // Every confusion row is a distribution; posteriors are probabilities.
  for (std::size_t w = 0; w < accuracy.size(); ++w) {
    for (std::size_t c = 0; c < kClasses; ++c) {
      double row = 0.0;
      for (std::size_t k = 0; k < kClasses; ++k) row += ds.confusion_at(w, c, k);
      CHECK(row == Approx(1.0).epsilon(1e-9));
    }
  }
  for (double p : ds.consensus_posterior) {
    CHECK(p >= 0.1);
    CHECK(p <= 1.0);
  }
}

TEST_CASE("Dawid-Skene: past its cell budget the one-coin model, as accurate on one-coin data",
          "[dawid_skene]") {
  const std::vector<double> accuracy = {0.95, 0.9, 0.8, 0.6, 0.35};
  const Simulation sim = simulate(fashion_labels(2000), accuracy, 3, 2024);
  DawidSkeneOptions options;
  options.max_confusion_cells = 5 * kClasses * kClasses - 1;  // one cell short of the full model
  const DawidSkeneResult one_coin = dawid_skene(sim.labels, options);
  const DawidSkeneResult full = dawid_skene(sim.labels);
  REQUIRE(one_coin.one_coin);
  CHECK_FALSE(full.one_coin);
  CHECK(one_coin.confusion.empty());
  CHECK(one_coin.converged);
  for (std::size_t w = 0; w < accuracy.size(); ++w) {
    INFO("annotator " << w);
    CHECK(std::abs(one_coin.expected_accuracy[w] - sim.realised_accuracy[w]) < 0.03);
    double row = 0.0;
    for (std::size_t k = 0; k < kClasses; ++k) row += one_coin.confusion_at(w, 3, k);
    CHECK(row == Approx(1.0).epsilon(1e-9));
  }
  // The simulated errors are uniform, as the one-coin model assumes: its
  // consensus is at least as good as the full model's.
  CHECK(accuracy_of(one_coin.consensus, sim.truth) >=
        accuracy_of(full.consensus, sim.truth) - 0.005);
  CHECK(accuracy_of(one_coin.consensus, sim.truth) >
        accuracy_of(majority_vote(sim.labels), sim.truth));
}

TEST_CASE("Dawid-Skene: majority vote and a two-class hand case", "[dawid_skene]") {
  CrowdLabels labels;
  labels.classes = 2;
  labels.annotators = 3;
  labels.add_item({{0, 1}, {1, 1}, {2, 0}});
  labels.add_item({{0, 0}, {1, 0}, {2, 0}});
  labels.add_item({{0, 0}, {1, 1}});  // a tie: the first class
  labels.add_item({});                // no annotations
  CHECK(majority_vote(labels) == std::vector<int>{1, 0, 0, -1});
  const DawidSkeneResult ds = dawid_skene(labels);
  CHECK(ds.consensus[0] == 1);
  CHECK(ds.consensus[1] == 0);
  // The unannotated item's posterior is the prior.
  CHECK(ds.consensus_posterior[3] == Approx(*std::max_element(ds.priors.begin(), ds.priors.end())));
}

TEST_CASE("majority_label: the smallest label on a tie, unless a tied label is preferred",
          "[dawid_skene]") {
  const std::map<std::int64_t, std::int64_t> tie{{3, 2}, {7, 2}, {9, 1}};
  CHECK(majority_label(tie) == 3);
  CHECK(majority_label(tie, 7) == 7);  // among the tied: it wins
  CHECK(majority_label(tie, 9) == 3);  // fewer votes: the majority stands
  CHECK(majority_label(tie, 5) == 3);  // no votes at all
  CHECK(majority_label({{4, 1}}, 2) == 4);
  CHECK_FALSE(majority_label({}, 2).has_value());
}

TEST_CASE("Dawid-Skene: degenerate input stays finite or is refused clearly", "[dawid_skene]") {
  SECTION("no items") {
    CrowdLabels none;
    none.classes = 3;
    const DawidSkeneResult ds = dawid_skene(none);
    CHECK(ds.consensus.empty());
    CHECK(ds.converged);
    CHECK(all_finite(ds.priors));
  }
  SECTION("one class") {
    CrowdLabels one;
    one.classes = 1;
    one.annotators = 2;
    one.add_item({{0, 0}, {1, 0}});
    one.add_item({{0, 0}});
    const DawidSkeneResult ds = dawid_skene(one);
    CHECK(ds.consensus == std::vector<int>{0, 0});
    CHECK(ds.expected_accuracy[0] == Approx(1.0));
    CHECK(all_finite(ds.confusion));
  }
  SECTION("a class nobody uses") {
    CrowdLabels labels;
    labels.classes = 4;  // class 3 never appears
    labels.annotators = 2;
    for (int i = 0; i < 30; ++i) labels.add_item({{0, i % 3}, {1, i % 3}});
    const DawidSkeneResult ds = dawid_skene(labels);
    CHECK(all_finite(ds.confusion));
    CHECK(all_finite(ds.priors));
    CHECK(all_finite(ds.expected_accuracy));
    CHECK(ds.priors[3] < 0.01);
    for (int c : ds.consensus) CHECK(c != 3);
  }
  SECTION("one annotator") {
    CrowdLabels labels;
    labels.classes = 2;
    labels.annotators = 1;
    labels.add_item({{0, 1}});
    labels.add_item({{0, 0}});
    const DawidSkeneResult ds = dawid_skene(labels);
    CHECK(ds.consensus == std::vector<int>{1, 0});
    CHECK(all_finite(ds.expected_accuracy));
  }
  SECTION("bad input") {
    CrowdLabels labels;
    labels.classes = 2;
    labels.annotators = 1;
    labels.add_item({{0, 2}});  // label out of range
    CHECK_THROWS_AS(dawid_skene(labels), winnow::Error);
    labels.label[0] = 1;
    labels.annotator[0] = 1;  // annotator out of range
    CHECK_THROWS_AS(dawid_skene(labels), winnow::Error);
    labels.annotator[0] = 0;
    CHECK_THROWS_AS(dawid_skene(labels, {0, 1e-5, 0.01}), winnow::Error);
    CHECK_THROWS_AS(dawid_skene(labels, {10, 1e-5, 0.0}), winnow::Error);
    CrowdLabels no_classes;
    CHECK_THROWS_AS(dawid_skene(no_classes), winnow::Error);
  }
}
