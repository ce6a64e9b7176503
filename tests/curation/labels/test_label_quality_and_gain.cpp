#include <catch2/catch.hpp>

#include <cmath>

#include "support/curation_test_helpers.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/judge/information_gain.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::embed;
using namespace winnow::curation::judge;
using namespace winnow::curation::labels;
using namespace winnow::curation::test;

TEST_CASE("label quality flags planted flips on a real slice", "[label_quality]") {
  const auto& recs = fashion_test();
  const std::size_t n = 3000;
  EmbedderOptions eopt;
  eopt.width = eopt.height = 28;
  const auto embedder = make_embedder("pixels(dim=128)", eopt);
  const std::size_t d = embedder->dim();
  auto index = winnow::index::make_vector_index("flat", d);
  std::vector<int> labels(n);
  std::vector<float> vecs(n * d);
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = std::stoi(*recs[i].label);
    embedder->embed(recs[i], vecs.data() + i * d);
    ids[i] = static_cast<std::int64_t>(i);
  }
  index->add(ids, vecs);
  // Flip 20 labels of clear-cut classes (trouser 1, bag 8, ankle boot 9) to 'bag'/'trouser'.
  std::vector<std::size_t> flipped;
  for (std::size_t i = 0; i < n && flipped.size() < 20; i += 7) {
    if (labels[i] == 9) {
      labels[i] = 1;
      flipped.push_back(i);
    } else if (labels[i] == 1) {
      labels[i] = 8;
      flipped.push_back(i);
    }
  }
  REQUIRE(flipped.size() == 20);
  const LabelQuality lq;
  CHECK(lq.options().k == 50);
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  int caught = 0;
  for (const std::size_t i : flipped) {
    const auto id = static_cast<std::int64_t>(i);
    const LabelQualityResult r = lq.score(*index, vecs.data() + i * d, labels[i], lookup, id);
    caught += r.flagged;
    CHECK(r.neighbours == 50);
    CHECK(r.flag_below == Approx(0.08));
    CHECK(r.suggested_label != std::optional<int>(labels[i]));
  }
  CHECK(caught >= 18);
  // Clean samples of the same classes are rarely flagged.
  int clean_flags = 0, clean = 0;
  for (std::size_t i = 1; i < n; i += 7) {
    if (labels[i] == 9 || labels[i] == 8) {
      ++clean;
      clean_flags +=
          lq.score(*index, vecs.data() + i * d, labels[i], lookup, static_cast<std::int64_t>(i))
              .flagged;
    }
  }
  CHECK(clean_flags * 20 <= clean);
  // No labelled neighbours: quality 1, not flagged.
  const LabelQualityResult none =
      lq.score(*index, vecs.data(), 3, [](std::int64_t) { return std::optional<int>{}; });
  CHECK(none.quality == 1.0);
  CHECK_FALSE(none.flagged);
}

TEST_CASE("a neighbour's vote weighs its inverse cosine distance", "[label_quality]") {
  // Around q = (1, 0): one neighbour at cosine 0.99 (distance 0.01) labelled
  // 0 and two at 0.98 (distance 0.02) labelled 1: weights 99 against 49 + 49.
  auto index = winnow::index::make_vector_index("flat", 2);
  const auto at = [](double cosine, double side) {
    return std::vector<float>{static_cast<float>(cosine),
                              static_cast<float>(side * std::sqrt(1.0 - cosine * cosine))};
  };
  const std::vector<std::vector<float>> points = {at(0.99, 1), at(0.98, 1), at(0.98, -1)};
  for (std::size_t i = 0; i < points.size(); ++i) {
    index->add(1, std::vector<std::int64_t>{static_cast<std::int64_t>(i)}.data(), points[i].data());
  }
  const std::vector<int> labels = {0, 1, 1};
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  const float q[2] = {1.0f, 0.0f};
  const LabelQualityResult zero = LabelQuality({3, 0.08}).score(*index, q, 0, lookup);
  CHECK(zero.neighbours == 3);
  CHECK(zero.quality == Approx(99.0 / 197.0).epsilon(1e-3));
  const LabelQualityResult one = LabelQuality({3, 0.08}).score(*index, q, 1, lookup);
  CHECK(one.quality == Approx(98.0 / 197.0).epsilon(1e-3));
  // Far neighbours: the cosine adds contrast (0.5 / 0.5 against 0.1 / 0.9).
  CHECK(neighbour_weight(0.5, 0.5) == Approx(1.0).epsilon(1e-4));
  CHECK(neighbour_weight(0.1, 0.5) == Approx(0.1 / 0.9).epsilon(1e-4));
  // No neighbour counts more than four median ones, an exact copy included.
  CHECK(neighbour_weight(1.0, 0.02) == Approx(200.0).epsilon(1e-4));
  CHECK(neighbour_weight(0.999, 0.02) == Approx(199.8).epsilon(1e-4));
  CHECK(neighbour_weight(1.0, 0.0) == Approx(1e6).epsilon(1e-4));
}

TEST_CASE("information gain is the mean cosine distance to the 4 nearest", "[gain]") {
  auto index = winnow::index::make_vector_index("flat", 2);
  const float q[2] = {1.0f, 0.0f};
  CHECK(information_gain(*index, q) == 1.0);  // empty index: maximal by definition
  const float a[2] = {1.0f, 0.0f};
  index->add(1, std::vector<std::int64_t>{0}.data(), a);
  CHECK(information_gain(*index, q) == Approx(0.0).margin(1e-6));  // exact copy
  const float b[2] = {0.0f, 1.0f};
  index->add(1, std::vector<std::int64_t>{1}.data(), b);
  CHECK(information_gain(*index, q) == Approx(0.5).margin(1e-6));  // (0 + 1) / 2 with 2 found
  const float c[2] = {-1.0f, 0.0f};
  const float e[2] = {0.0f, -1.0f};
  const float f[2] = {-1.0f, -1.0f};
  index->add(1, std::vector<std::int64_t>{2}.data(), c);
  index->add(1, std::vector<std::int64_t>{3}.data(), e);
  index->add(1, std::vector<std::int64_t>{4}.data(), f);
  // The 4 nearest of q: a (0), b (1), e (1), f (1 + 1/sqrt 2): c is 5th.
  CHECK(information_gain(*index, q) ==
        Approx((0.0 + 1.0 + 1.0 + (1.0 + std::sqrt(0.5))) / 4).margin(1e-5));
  CHECK(information_gain(*index, q, 1) == Approx(0.0).margin(1e-6));
  CHECK_THROWS_AS(information_gain(*index, q, 0), winnow::Error);
}
