// TextSketch and StoredTextSketches: the bound that rules a stored text
// candidate out without reading it must never be below the verifier's
// similarity (else a near duplicate would be missed), and must be tight
// enough on short texts to rule most unrelated ones out.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "winnow/curation/dataset/lookup/stored_text_sketches.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/dedup/text_sketch.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;

namespace {

ManifestRecord text_record(const std::string& text) {
  ManifestRecord r;
  r.kind = ContentKind::text;
  r.text = text;
  return r;
}

// A text of `words` words drawn from a small vocabulary (so that unrelated
// texts share some shingles), plus digits.
std::string random_text(std::mt19937_64& rng, int words) {
  static const std::vector<std::string> vocabulary = {
      "record", "of",    "class",   "the",  "a",       "sample",    "label",
      "image",  "shirt", "trouser", "bag",  "sneaker", "annotated", "by",
      "source", "batch", "near",    "copy", "é",       "日本"};
  std::string text;
  for (int w = 0; w < words; ++w) {
    if (!text.empty()) text += ' ';
    if (rng() % 4 == 0) {
      text += std::to_string(rng() % 1000000);
    } else {
      text += vocabulary[rng() % vocabulary.size()];
    }
  }
  return text;
}

// `text` with `edits` characters replaced, inserted or deleted at random.
std::string edited(std::mt19937_64& rng, std::string text, int edits) {
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const std::size_t at = rng() % text.size();
    switch (rng() % 3) {
      case 0:
        text[at] = static_cast<char>('a' + rng() % 26);
        break;
      case 1:
        text.insert(at, 1, static_cast<char>('a' + rng() % 26));
        break;
      default:
        text.erase(at, 1);
        break;
    }
  }
  return text;
}

}  // namespace

TEST_CASE("text sketch: the bound is never below the similarity", "[verifier][sketch]") {
  // Default and other rules: a shorter shingle, and Jaccard only.
  const std::vector<TextVerifierOptions> rules = {{}, {3, 0.8, 0.5}, {5, 0.7, 0.7}, {8, 0.9, 0.2}};
  for (const TextVerifierOptions& options : rules) {
    const TextNearDuplicateVerifier verifier(options);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(options.shingle));
      std::size_t pairs = 0, at_threshold = 0;
      for (int i = 0; i < 400; ++i) {
        const int words = 1 + static_cast<int>(rng() % (i % 4 == 0 ? 200 : 12));
        const std::string a = random_text(rng, words);
        // Edited copies of every strength, and unrelated texts.
        const std::string b =
            i % 3 == 0 ? random_text(rng, words) : edited(rng, a, static_cast<int>(rng() % 12));
        const std::vector<std::uint64_t> sa =
            TextNearDuplicateVerifier::shingles(a, options.shingle);
        const std::vector<std::uint64_t> sb =
            TextNearDuplicateVerifier::shingles(b, options.shingle);
        const TextSketch sketch = TextSketch::of(sb);
        CHECK(sketch.size() == sb.size());
        // Each set's own shingles all have their bits set.
        CHECK(sketch.max_common(sb) == sb.size());
        const double exact = verifier.similarity(text_record(a), text_record(b));
        const double most = verifier.similarity_at_most(sa, sketch);
        INFO("a='" << a << "' b='" << b << "'");
        CHECK(most >= exact);
        ++pairs;
        if (exact >= verifier.threshold()) ++at_threshold;
      }
      CHECK(pairs == 400);
      CHECK(at_threshold > 20);  // near duplicates were among the pairs
    }
  }
}

TEST_CASE("text sketch: rules most unrelated short texts out, no near duplicate",
          "[verifier][sketch]") {
  const TextNearDuplicateVerifier verifier;
  std::mt19937_64 rng(42);
  std::size_t unrelated = 0, ruled_out = 0;
  for (int i = 0; i < 2000; ++i) {
    // As in the 1M benchmark: a key number and a class.
    const std::string a =
        "record " + std::to_string(rng() % 1000000) + " of class " + std::to_string(rng() % 20);
    const std::string b =
        "record " + std::to_string(rng() % 1000000) + " of class " + std::to_string(rng() % 20);
    const std::vector<std::uint64_t> sa = TextNearDuplicateVerifier::shingles(a, 5);
    const TextSketch sketch = TextSketch::of(TextNearDuplicateVerifier::shingles(b, 5));
    const bool out = verifier.similarity_at_most(sa, sketch) < verifier.threshold();
    if (verifier.similarity(text_record(a), text_record(b)) >= verifier.threshold()) {
      CHECK_FALSE(out);
    } else {
      ++unrelated;
      ruled_out += out ? 1 : 0;
    }
  }
  REQUIRE(unrelated > 1900);
  CHECK(static_cast<double>(ruled_out) >= 0.9 * static_cast<double>(unrelated));
}

TEST_CASE("stored text sketches: kept by id, cleared, and grown by an eighth", "[ingest][sketch]") {
  using winnow::curation::StoredTextSketches;
  StoredTextSketches sketches(5);
  CHECK(sketches.shingle() == 5);
  const TextSketch one = TextSketch::of(TextNearDuplicateVerifier::shingles("first text", 5));
  const TextSketch two = TextSketch::of(TextNearDuplicateVerifier::shingles("another one", 5));
  sketches.put(7, one);
  sketches.put(3, two);
  sketches.put(0, one);   // not a sample id
  sketches.put(-4, one);  // nor this
  REQUIRE(sketches.find(7).has_value());
  CHECK(sketches.find(7)->bits() == one.bits());
  CHECK(sketches.find(7)->size() == one.size());
  REQUIRE(sketches.find(3).has_value());
  CHECK(sketches.find(3)->bits() == two.bits());
  CHECK_FALSE(sketches.find(5).has_value());  // between kept ids
  CHECK_FALSE(sketches.find(8).has_value());  // past them
  CHECK_FALSE(sketches.find(0).has_value());
  CHECK_FALSE(sketches.find(-4).has_value());
  sketches.forget(3);
  CHECK_FALSE(sketches.find(3).has_value());
  CHECK(sketches.find(7).has_value());
  sketches.forget(1000);  // never kept: nothing to drop
  // An empty text has a sketch too: zero shingles.
  sketches.put(9, TextSketch::of({}));
  REQUIRE(sketches.find(9).has_value());
  CHECK(sketches.find(9)->size() == 0);
  sketches.clear();
  CHECK_FALSE(sketches.find(7).has_value());
  CHECK(sketches.bytes() == 0);

  // Ids one at a time, as a process writes them: about 20 bytes an id.
  constexpr std::int64_t kIds = 200000;
  for (std::int64_t id = 1; id <= kIds; ++id) sketches.put(id, one);
  CHECK(sketches.find(kIds).has_value());
  CHECK(sketches.bytes() <= static_cast<std::size_t>(kIds) * 20 * 5 / 4);
}

TEST_CASE("near-duplicate finder: ruled-out candidates are neither looked up nor matched",
          "[finder][sketch]") {
  const TextNearDuplicateVerifier verifier;
  const auto index = winnow::index::make_vector_index("flat", 2);
  const NearDuplicateFinder finder(*index, verifier, {3, 0.0});
  const ManifestRecord query = text_record("the quick brown fox jumps over the lazy dog");
  const ManifestRecord copy = text_record("the quick brown fox jumps over the lazy dog!");
  const ManifestRecord other = text_record("an unrelated sentence about annotators");
  winnow::index::SearchResults results;
  results.num_queries = 1;
  results.k = 3;
  results.ids = {10, 11, 12};
  results.similarities = {0.99f, 0.98f, 0.97f};
  std::vector<std::int64_t> looked_up;
  const RecordLookup lookup = [&](std::int64_t id) -> const ManifestRecord* {
    looked_up.push_back(id);
    return id == 11 ? &copy : &other;
  };
  const NearDuplicateMatch all = finder.verify(results, 0, query, lookup);
  CHECK(all.found);
  CHECK(all.id == 11);
  CHECK(all.candidates_checked == 3);
  CHECK(looked_up.size() == 3);

  looked_up.clear();
  const RuledOut not_the_copy = [](std::int64_t id) { return id != 11; };
  const NearDuplicateMatch some = finder.verify(results, 0, query, lookup, {}, not_the_copy);
  CHECK(some.found);
  CHECK(some.id == 11);
  CHECK(some.similarity == all.similarity);
  CHECK(some.candidates_checked == 1);
  CHECK(some.candidates_ruled_out == 2);
  CHECK(looked_up == std::vector<std::int64_t>{11});
}
