#include <catch2/catch.hpp>

#include "curation_test_helpers.h"
#include "winnow/curation/embedder.h"
#include "winnow/curation/near_duplicate_finder.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::test;

TEST_CASE("an edited copy verifies and a different image does not", "[verifier]") {
  const auto& recs = fashion_test();
  const ImageNearDuplicateVerifier verifier;
  CHECK(verifier.threshold() == Approx(0.99));
  for (std::size_t i : {0u, 17u, 256u, 4000u}) {
    INFO("image " << i);
    const ManifestRecord copy = edited_copy(recs[i], 1, -1, 1.08, 5.0, static_cast<unsigned>(i));
    CHECK(verifier.similarity(copy, recs[i]) >= verifier.threshold());
    CHECK(verifier.similarity(recs[i], recs[i]) == Approx(1.0));
    CHECK(verifier.similarity(copy, recs[i + 1]) < verifier.threshold());
  }
  ManifestRecord text;
  text.key = "t";
  text.kind = ContentKind::text;
  text.text = "x";
  CHECK_THROWS_AS(verifier.similarity(text, recs[0]), winnow::Error);
}

TEST_CASE("text near duplicates use shingle Jaccard", "[verifier]") {
  const TextNearDuplicateVerifier verifier;
  ManifestRecord a, b, c;
  a.kind = b.kind = c.kind = ContentKind::text;
  a.text = "Winnow keeps the data set clean by dropping near duplicate samples early.";
  b.text = "Winnow keeps the data set clean by dropping near-duplicate samples early.";
  c.text = "An entirely different sentence about label noise and annotators.";
  CHECK(verifier.similarity(a, a) == 1.0);
  CHECK(verifier.similarity(a, b) >= 0.8);
  CHECK(verifier.similarity(a, c) < 0.1);
}

TEST_CASE("the finder returns the planted original on a real slice", "[finder]") {
  const auto& recs = fashion_test();
  const std::size_t n = 1000;
  EmbedderOptions eopt;
  eopt.width = eopt.height = 28;
  const auto embedder = make_embedder("pixels(fourier=6)", eopt);
  auto index = winnow::index::make_vector_index("flat", embedder->dim());
  const ImageNearDuplicateVerifier verifier;
  const NearDuplicateFinder finder(*index, verifier);
  const RecordLookup lookup = [&](std::int64_t id) { return &recs[static_cast<std::size_t>(id)]; };

  // Empty index: nothing found, thresholds still reported.
  const auto v0 = embedder->embed(recs[0]);
  const NearDuplicateMatch empty = finder.find(v0.data(), recs[0], lookup);
  CHECK_FALSE(empty.found);
  CHECK(empty.id == -1);
  CHECK(empty.threshold == Approx(0.99));
  CHECK(empty.candidates == 10);

  std::vector<float> vecs(n * embedder->dim());
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    embedder->embed(recs[i], vecs.data() + i * embedder->dim());
    ids[i] = static_cast<std::int64_t>(i);
  }
  index->add(ids, vecs);
  int found = 0;
  for (std::size_t i = 0; i < 50; ++i) {
    const std::size_t src = i * 19;
    const ManifestRecord copy = edited_copy(recs[src], (i % 3) - 1, 1, 0.92, 4.0, static_cast<unsigned>(i));
    const auto v = embedder->embed(copy);
    const NearDuplicateMatch m = finder.find(v.data(), copy, lookup);
    found += m.found && m.id == static_cast<std::int64_t>(src);
    CHECK(m.candidates_checked > 0);
  }
  CHECK(found >= 48);
  // Unseen images of the same set are (almost) never matched.
  int false_matches = 0;
  for (std::size_t i = n; i < n + 200; ++i) {
    const auto v = embedder->embed(recs[i]);
    false_matches += finder.find(v.data(), recs[i], lookup).found;
  }
  CHECK(false_matches <= 4);
}
