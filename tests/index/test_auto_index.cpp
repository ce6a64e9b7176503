// AutoVectorIndex: a flat index's results while small, an IVF's once it holds
// switchAt vectors, and both parts saved and reopened as they were.
#include <catch2/catch.hpp>

#include "index_test_helpers.h"
#include "winnow/index/auto_vector_index.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/index/vector_index_io.h"

namespace {

using namespace winnow::index;
using namespace winnow::index::test;
using Catch::Matchers::Contains;

constexpr std::size_t kDim = 32;

void same_results(const SearchResults& a, const SearchResults& b) {
  CHECK(a.ids == b.ids);
  CHECK(a.similarities == b.similarities);
  CHECK(a.probes_per_query == b.probes_per_query);
  CHECK(a.probes == b.probes);
}

// Adds rows [from, to) in calls of `step`.
void add_rows(VectorIndex& index, const std::vector<std::int64_t>& ids,
              const std::vector<float>& base, std::size_t from, std::size_t to, std::size_t step) {
  for (std::size_t b = from; b < to; b += step) {
    const std::size_t count = std::min(step, to - b);
    index.add(count, ids.data() + b, base.data() + b * kDim);
  }
}

}  // namespace

TEST_CASE("the auto config names switchAt and the IVF's parameters", "[auto]") {
  CHECK(canonical_vector_index_config("auto") ==
        "auto(switchAt=65536,nprobe=16,cellScale=100,cellCap=256)");
  CHECK(canonical_vector_index_config(" auto ( nprobe = 8 , switchAt = 1000 ) ") ==
        "auto(switchAt=1000,nprobe=8,cellScale=100,cellCap=256)");
  CHECK(canonical_vector_index_config("auto(switchAt=10,sharedScanFrom=7)") ==
        "auto(switchAt=10,nprobe=16,cellScale=100,cellCap=256,sharedScanFrom=7)");
  CHECK_THROWS_WITH(make_vector_index("auto(switchAt=0)", kDim), Contains("switchAt"));
  CHECK_THROWS_WITH(make_vector_index("auto(efSearch=64)", kDim), Contains("efSearch"));
  CHECK_THROWS_WITH(make_vector_index("auto(cellCap=3)", kDim), Contains("cellCap"));
  const auto index = make_vector_index("auto", kDim);
  CHECK(index->type() == "flat");
  CHECK(index->config() == "auto(switchAt=65536,nprobe=16,cellScale=100,cellCap=256)");
}

TEST_CASE("below switchAt an auto index answers as a flat index, bit for bit", "[auto]") {
  const Dataset data = clustered_dataset(3000, 40, kDim, 10, 5);
  const std::vector<std::int64_t> ids = sequential_ids(3000, 7, 3);
  auto automatic = make_vector_index("auto(switchAt=3001)", kDim);
  auto flat = make_vector_index("flat", kDim);
  add_rows(*automatic, ids, data.base, 0, 3000, 700);
  add_rows(*flat, ids, data.base, 0, 3000, 700);
  REQUIRE(automatic->size() == 3000);
  CHECK(automatic->type() == "flat");
  CHECK(automatic->per_query_results() == flat->per_query_results());
  CHECK(automatic->min_queries_per_call() == 20);
  same_results(automatic->search(data.queries, 10), flat->search(data.queries, 10));  // 40 queries
  const std::vector<float> few(data.queries.begin(), data.queries.begin() + 5 * kDim);
  same_results(automatic->search(few, 10), flat->search(few, 10));  // the one-query kernel
  CHECK(automatic->remove({ids[0], ids[1], 12345}) == 2);
  CHECK(flat->remove({ids[0], ids[1]}) == 2);
  CHECK_FALSE(automatic->contains(ids[0]));
  CHECK(automatic->ids() == flat->ids());
  same_results(automatic->search(data.queries, 10), flat->search(data.queries, 10));
}

// From the add that brings it to switchAt, an auto index is the IVF made by
// one add of the flat part's vectors, then the same later adds.
TEST_CASE("an auto index switches to IVF at switchAt and answers as that IVF", "[auto]") {
  const std::size_t n = 6000;  // switchAt 2,500
  const Dataset data = clustered_dataset(n, 60, kDim, 12, 9);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1);
  const std::string ivf_config = "ivf(nprobe=4,cellScale=100,cellCap=64)";
  auto automatic = make_vector_index("auto(switchAt=2500,nprobe=4,cellCap=64)", kDim);
  const auto& as_auto = dynamic_cast<const AutoVectorIndex&>(*automatic);

  add_rows(*automatic, ids, data.base, 0, 2000, 1000);
  CHECK_FALSE(as_auto.switched());
  CHECK(automatic->remove({ids[5]}) == 1);  // removed before the switch: not carried over
  add_rows(*automatic, ids, data.base, 2000, 2600, 600);  // 2,599 live: past switchAt
  REQUIRE(as_auto.switched());
  CHECK(automatic->type() == "ivf");
  CHECK(automatic->size() == 2599);
  CHECK_FALSE(automatic->contains(ids[5]));
  CHECK(automatic->per_query_results());
  CHECK(automatic->config() == "auto(switchAt=2500,nprobe=4,cellScale=100,cellCap=64)");

  auto ivf = make_vector_index(ivf_config, kDim);
  std::vector<std::int64_t> first_ids(ids.begin(), ids.begin() + 2600);
  std::vector<float> first_rows(data.base.begin(), data.base.begin() + 2600 * kDim);
  first_ids.erase(first_ids.begin() + 5);
  first_rows.erase(first_rows.begin() + 5 * kDim, first_rows.begin() + 6 * kDim);
  ivf->add(first_ids, first_rows);
  same_results(automatic->search(data.queries, 10), ivf->search(data.queries, 10));

  add_rows(*automatic, ids, data.base, 2600, n, 512);
  add_rows(*ivf, ids, data.base, 2600, n, 512);
  CHECK(dynamic_cast<const IvfVectorIndex&>(*ivf).cells() > 1);
  same_results(automatic->search(data.queries, 10), ivf->search(data.queries, 10));
  CHECK(automatic->locality_keys(60, data.queries.data()) ==
        ivf->locality_keys(60, data.queries.data()));

  // Removing vectors never switches back.
  std::vector<std::int64_t> most(ids.begin(), ids.begin() + 5000);
  automatic->remove(most);
  CHECK(as_auto.switched());
  CHECK(automatic->type() == "ivf");
}

TEST_CASE("an auto index reopened before or after its switch grows on as if never saved",
          "[auto][io]") {
  const std::size_t n = 3000;
  const Dataset data = clustered_dataset(n, 30, kDim, 8, 13);
  const std::vector<std::int64_t> ids = sequential_ids(n, 1);
  const std::string config = "auto(switchAt=1200,nprobe=3,cellCap=32)";
  const std::size_t saved_at = GENERATE(std::size_t{1000}, std::size_t{2000});
  INFO("saved at " << saved_at);
  ScratchDir dir;
  const std::string path = dir.file("auto.widx");

  auto kept = make_vector_index(config, kDim);
  add_rows(*kept, ids, data.base, 0, saved_at, 500);
  save_vector_index(*kept, path, IndexFingerprint{saved_at, ids[saved_at - 1]});
  CHECK(read_vector_index_info(path).config == canonical_vector_index_config(config));
  std::unique_ptr<VectorIndex> loaded = load_vector_index(path).index;
  CHECK(loaded->type() == kept->type());
  CHECK(loaded->type() == (saved_at < 1200 ? "flat" : "ivf"));
  same_results(loaded->search(data.queries, 10), kept->search(data.queries, 10));

  add_rows(*kept, ids, data.base, saved_at, n, 500);
  add_rows(*loaded, ids, data.base, saved_at, n, 500);
  CHECK(loaded->type() == "ivf");
  same_results(loaded->search(data.queries, 10), kept->search(data.queries, 10));
}

TEST_CASE(
    "open_or_rebuild keeps an auto index for new search knobs and rebuilds it for a new "
    "switchAt",
    "[auto][io]") {
  const Dataset data = clustered_dataset(800, 10, kDim, 8, 17);
  const std::vector<std::int64_t> ids = sequential_ids(800, 1);
  ScratchDir dir;
  const std::string path = dir.file("auto.widx");
  const IndexFingerprint fp{800, ids.back()};
  const auto source = [&](int* calls) {
    return [&, calls](VectorBatch& batch) {
      if ((*calls)++ > 0) return false;
      batch.ids = ids;
      batch.vectors = data.base;
      return true;
    };
  };
  int calls = 0;
  REQUIRE(open_or_rebuild(path, "auto(switchAt=500)", kDim, fp, source(&calls)).rebuilt);
  calls = 0;
  OpenResult knobs = open_or_rebuild(path, "auto(switchAt=500,nprobe=2)", kDim, fp, source(&calls));
  CHECK_FALSE(knobs.rebuilt);
  CHECK(knobs.index->config() == "auto(switchAt=500,nprobe=2,cellScale=100,cellCap=256)");
  calls = 0;
  OpenResult other = open_or_rebuild(path, "auto(switchAt=900)", kDim, fp, source(&calls));
  CHECK(other.rebuilt);
  CHECK(other.reason == RebuildReason::config_changed);
  CHECK(other.index->type() == "flat");
}
