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
  CHECK(lq.options().k == 30);
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  int caught = 0;
  for (const std::size_t i : flipped) {
    const auto id = static_cast<std::int64_t>(i);
    const LabelQualityResult r = lq.score(*index, vecs.data() + i * d, labels[i], lookup, id);
    caught += r.flagged;
    CHECK(r.neighbours == 30);
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
