// GrowingBloomFilter and StoredSampleFilter: the in-memory answer to "may the
// store hold this content hash or key?", which must never say no to a
// stored sample.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "winnow/curation/dataset/lookup/growing_bloom_filter.h"
#include "winnow/curation/dataset/lookup/stored_sample_filter.h"
#include "support/temp_dir.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/store/metadata_store.h"

namespace {

using winnow::curation::GrowingBloomFilter;
using winnow::curation::StoredSampleFilter;
using winnow::curation::dedup::hash64;
using winnow::store::MetadataStore;

winnow::store::NewSample sample(const std::string& key, const std::string& hash) {
  winnow::store::NewSample s;
  s.external_key = key;
  s.content_hash = hash;
  return s;
}

}  // namespace

TEST_CASE("growing Bloom filter: no false no across its growth, few false maybes",
          "[ingest][filter]") {
  GrowingBloomFilter filter;
  CHECK_FALSE(filter.may_contain(42));
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  // Past the first filter's capacity several times over: five filters.
  const std::size_t added = 31 * GrowingBloomFilter::kFirstCapacity / 2;
  std::vector<std::uint64_t> hashes(added);
  for (auto& h : hashes) {
    h = rng();
    filter.add(h);
  }
  std::size_t missing = 0;
  for (const auto h : hashes) missing += filter.may_contain(h) ? 0 : 1;
  CHECK(missing == 0);
  std::size_t false_maybe = 0;
  const std::size_t others = 200000;
  for (std::size_t i = 0; i < others; ++i) false_maybe += filter.may_contain(rng()) ? 1 : 0;
  // About 1% per full filter (five here), not more.
  CHECK(false_maybe < others * 6 / 100);
  CHECK(false_maybe > 0);
  // About 10 bits a hash: 31/2 first capacities held in 1 + 2 + 4 + 8 + 16 of them.
  CHECK(filter.bytes() == 31 * GrowingBloomFilter::kFirstCapacity * 10 / 8);
  filter.clear();
  CHECK(filter.bytes() == 0);
  CHECK_FALSE(filter.may_contain(hashes.front()));
}

TEST_CASE("stored-sample filter: catches up with every sample, whichever connection wrote it",
          "[ingest][filter]") {
  winnow::test::TempDir dir;
  const std::string db = dir.file("filter.db");
  MetadataStore store(db);
  MetadataStore other(db);  // another process's connection to the same file
  StoredSampleFilter filter;
  filter.catch_up(store);  // nothing stored yet
  CHECK_FALSE(filter.may_hold_key(hash64("k0")));

  std::vector<winnow::store::NewSample> first, second;
  for (int i = 0; i < 500; ++i)
    first.push_back(sample("k" + std::to_string(i), "h" + std::to_string(i)));
  for (int i = 500; i < 900; ++i)
    second.push_back(sample("k" + std::to_string(i), "h" + std::to_string(i)));
  store.insert_samples(first);
  filter.catch_up(store);
  other.insert_samples(second);
  CHECK_FALSE(filter.may_hold_key(hash64("k700")));  // not caught up yet (almost surely: 1%)
  filter.catch_up(store);
  for (int i = 0; i < 900; ++i) {
    CHECK(filter.may_hold_key(hash64("k" + std::to_string(i))));
    CHECK(filter.may_hold_content_hash(hash64("h" + std::to_string(i))));
  }
  // Keys and hashes are separate sets: a key is not taken for a hash.
  std::size_t crossed = 0;
  for (int i = 0; i < 900; ++i)
    crossed += filter.may_hold_content_hash(hash64("k" + std::to_string(i)));
  CHECK(crossed < 50);

  filter.clear();
  CHECK_FALSE(filter.may_hold_key(hash64("k1")));
  filter.catch_up(store);  // all of them again
  CHECK(filter.may_hold_key(hash64("k1")));
  CHECK(filter.may_hold_key(hash64("k899")));
}
