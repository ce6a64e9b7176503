// Bulk ingest: the daemon records samples in batches, one transaction per
// batch. (Its speed is a benchmark's business, not a test's: timed tests are
// flaky on shared machines.)
#include <catch2/catch.hpp>

#include "store_test_support.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::TempDir;

TEST_CASE("60,000 samples with one annotation each insert in batches", "[store][bulk]") {
  constexpr int kSamples = 60000;
  constexpr int kBatch = 1000;
  TempDir dir;
  MetadataStore store(dir.file("throughput.db"));

  std::vector<std::vector<NewSample>> batches;
  for (int first = 0; first < kSamples; first += kBatch) {
    auto& batch = batches.emplace_back();
    for (int i = first; i < first + kBatch; ++i) {
      batch.push_back(test::make_sample(i, i % 2 == 0 ? "web" : "books"));
      batch.back().gain = 0.5;
    }
  }

  for (const auto& batch : batches) {
    store.insert_samples(batch);
  }

  CHECK(store.count_by_status().total() == kSamples);
  CHECK(store.find_by_content_hash("hash-59999")->external_key == "sample-59999");
  CHECK(store.count_by_source().size() == 2);
}
