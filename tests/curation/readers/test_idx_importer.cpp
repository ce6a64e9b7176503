// import_idx: IDX sets as manifest records. The reading itself (gzip, headers,
// truncation) is tested with winnow::dataset in tests/dataset/.
#include <catch2/catch.hpp>

#include "support/curation_test_helpers.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::readers;
using namespace winnow::curation::test;

namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

}  // namespace

TEST_CASE("the real Fashion-MNIST test set becomes one record per image", "[idx]") {
  const winnow::dataset::IdxImages images = winnow::dataset::read_idx_images(kFashionTestImages);
  const auto& records = fashion_test();
  REQUIRE(records.size() == 10000);
  CHECK(records[123].key == "test-000123");
  CHECK(records[123].width == 28);
  CHECK(records[0].label == std::optional<std::string>("9"));
  CHECK(records[0].source == "t10k-images-idx3-ubyte.gz");
  CHECK(records[5].content_hash ==
        content_hash(ContentKind::pixels, images.image(5), images.image_size()));
}

TEST_CASE("IDX images and labels that disagree on the count are an error", "[idx]") {
  ScratchDir dir;
  CHECK_THROWS_WITH(
      import_idx(kFashionTestImages, dir.write("l.idx", be32(0x801) + be32(1) + "a"), "t"),
      Catch::Contains("disagree"));
}
