// A duplicate group of image files keeps its largest copy: a larger copy
// arriving later (in the same chunk, a later chunk or a later batch) makes
// the earlier one its duplicate by a recorded decision; keep = first keeps
// arrival order. Real clip art, the real store and index.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image_test_files.h"
#include "support/curation_pipeline.h"
#include "support/temp_dir.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_resize.h"
#include "winnow/store/vector_table.h"

namespace fs = std::filesystem;
using namespace winnow;
using namespace winnow::curation;
using namespace winnow::image;
using winnow::image::test::clip_art;
using winnow::image::test::encode_jpeg;
using winnow::image::test::read_bytes;
using winnow::image::test::write_bytes;

namespace {

std::string path_line(const std::string& key, const fs::path& path) {
  return nlohmann::json{{"key", key}, {"path", path.string()}, {"label", "animal"}}.dump();
}

ingest::BatchReport ingest_lines(winnow::test::Pipeline& p, const std::string& manifest,
                                 const std::vector<std::string>& lines) {
  {
    std::ofstream out(manifest);
    for (const std::string& line : lines) out << line << "\n";
  }
  readers::ManifestReaderOptions reading;
  reading.image = p.image_reading();
  readers::ManifestReader reader(manifest, reading);
  return p.ingest_batch(manifest, readers::file_checksum(manifest), reader);
}

// Originals, and per original a half-size JPEG copy written under dir.
struct Pairs {
  std::vector<fs::path> large, small;
};

Pairs make_pairs(const winnow::test::TempDir& dir, std::size_t n) {
  Pairs pairs;
  std::set<std::vector<std::uint8_t>> seen;  // the set holds a few pictures twice
  for (const fs::path& original : clip_art(n, "animals")) {
    const std::vector<std::uint8_t> png = read_bytes(original.string());
    const Image image = decode_image(png.data(), png.size());
    if (image.width < 64 || image.height < 64) continue;
    const std::vector<std::uint8_t> jpeg =
        encode_jpeg(resize_area(image, image.width / 2, image.height / 2), 90);
    if (!seen.insert(jpeg).second) continue;
    const fs::path small = dir.path() / ("small-" + original.stem().string() + ".jpg");
    write_bytes(small.string(), jpeg);
    pairs.large.push_back(original);
    pairs.small.push_back(small);
  }
  return pairs;
}

// A dataset for image files (the colour embedder winnow chooses for them).
std::string colour_dataset(const winnow::test::TempDir& dir, const std::string& keep) {
  const std::string db = dir.file(keep + ".db");
  CurationConfig config;
  config.embedder = "pixels(width=32,height=32,fourier=6,colour=1)";
  config.keep = keep;
  winnow::test::Pipeline::init(db, config);
  return db;
}

}  // namespace

TEST_CASE("the larger copy of an image file is kept, whenever it arrives", "[image][better_copy]") {
  winnow::test::TempDir dir;
  const Pairs pairs = make_pairs(dir, 40);
  if (pairs.large.size() < 20) FAIL("Debian's openclipart-png is not installed");
  const std::string db = colour_dataset(dir, "largest");
  winnow::test::Pipeline p(db);

  // Batch 1: every small copy, then in the same batch the large copy of the
  // first ten. Batch 2: the large copies of the rest.
  const std::size_t n = pairs.large.size();
  std::vector<std::string> first;
  for (std::size_t i = 0; i < n; ++i)
    first.push_back(path_line("small" + std::to_string(i), pairs.small[i]));
  for (std::size_t i = 0; i < 10; ++i)
    first.push_back(path_line("large" + std::to_string(i), pairs.large[i]));
  ingest_lines(p, dir.file("b1.jsonl"), first);
  std::vector<std::string> second;
  for (std::size_t i = 10; i < n; ++i)
    second.push_back(path_line("large" + std::to_string(i), pairs.large[i]));
  const ingest::BatchReport r2 = ingest_lines(p, dir.file("b2.jsonl"), second);
  CHECK(r2.counts[store::SampleStatus::accepted] == static_cast<std::int64_t>(n - 10));

  store::MetadataStore& s = p.store();
  for (std::size_t i = 0; i < n; ++i) {
    const auto large = s.find_by_external_key("large" + std::to_string(i));
    const auto small = s.find_by_external_key("small" + std::to_string(i));
    REQUIRE(large);
    REQUIRE(small);
    INFO("pair " << i);
    CHECK(large->status == store::SampleStatus::accepted);
    CHECK(small->status == store::SampleStatus::duplicate_near);
    CHECK(small->duplicate_of == large->id);
    // The decision that made it a duplicate names the copy kept.
    CHECK_THAT(s.events_of(small->id).back().reason, Catch::Contains("a better copy arrived"));
  }
  // The superseded copies left the index and curation_vectors.
  CHECK(p.dataset().index().size() == n);
  CHECK(store::VectorTable(s.database()).judged_ids().size() == n);

  // Reopened, the index is the store's.
  winnow::test::Pipeline reopened(db);
  CHECK(reopened.dataset().index().size() == n);
}

TEST_CASE("keep = first keeps the earlier copy", "[image][better_copy]") {
  winnow::test::TempDir dir;
  const Pairs pairs = make_pairs(dir, 10);
  if (pairs.large.size() < 5) FAIL("Debian's openclipart-png is not installed");
  const std::string db = colour_dataset(dir, "first");
  winnow::test::Pipeline p(db);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < pairs.large.size(); ++i) {
    lines.push_back(path_line("small" + std::to_string(i), pairs.small[i]));
    lines.push_back(path_line("large" + std::to_string(i), pairs.large[i]));
  }
  ingest_lines(p, dir.file("m.jsonl"), lines);
  for (std::size_t i = 0; i < pairs.large.size(); ++i) {
    CHECK(p.store().find_by_external_key("small" + std::to_string(i))->status ==
          store::SampleStatus::accepted);
    CHECK(p.store().find_by_external_key("large" + std::to_string(i))->status ==
          store::SampleStatus::duplicate_near);
  }
}
