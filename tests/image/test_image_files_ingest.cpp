// Image files through the ingest pipeline with the default config: real
// colour clip art (Debian's openclipart-png), a JPEG re-encoding and a
// brightened copy found as near duplicates, a byte copy as exact, and bad
// files rejected with a reason that says what is wrong.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image_test_files.h"
#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/image/image_decoder.h"

namespace fs = std::filesystem;
using namespace winnow::curation::readers;
using winnow::curation::CurationConfig;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using namespace winnow::image;
using namespace winnow::image::test;

namespace {

// `png` with a tEXt chunk (keyword, text) inserted after its IHDR chunk.
std::vector<std::uint8_t> with_text_chunk(const std::vector<std::uint8_t>& png,
                                          const std::string& keyword, const std::string& text) {
  std::vector<std::uint8_t> body = {'t', 'E', 'X', 't'};
  body.insert(body.end(), keyword.begin(), keyword.end());
  body.push_back(0);
  body.insert(body.end(), text.begin(), text.end());
  auto be32 = [](std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(v >> shift));
  };
  std::vector<std::uint8_t> chunk;
  be32(chunk, static_cast<std::uint32_t>(body.size() - 4));
  chunk.insert(chunk.end(), body.begin(), body.end());
  be32(chunk, static_cast<std::uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size()))));
  constexpr std::size_t kAfterIhdr = 8 + 25;  // signature, IHDR (length, type, 13 bytes, CRC)
  std::vector<std::uint8_t> out;
  out.reserve(png.size() + chunk.size());
  out.insert(out.end(), png.begin(), png.begin() + kAfterIhdr);
  out.insert(out.end(), chunk.begin(), chunk.end());
  out.insert(out.end(), png.begin() + kAfterIhdr, png.end());
  return out;
}

std::string path_line(const std::string& key, const fs::path& path) {
  return nlohmann::json{{"key", key}, {"path", path.string()}, {"label", "animal"}}.dump();
}

}  // namespace

TEST_CASE("image files: near and exact copies found, bad files rejected with reasons",
          "[image][ingest]") {
  const std::vector<fs::path> originals = clip_art(60);
  if (originals.size() < 60) {
    FAIL("Debian's openclipart-png is not installed (scripts/install-deps installs it)");
  }
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  winnow::test::Pipeline pipeline(db);

  std::vector<std::string> lines;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    lines.push_back(path_line("orig" + std::to_string(i), originals[i]));
  }
  // Copies of originals 3 and 7: the JPEG re-encoding, 10% brighter, bytes.
  const std::vector<std::uint8_t> png3 = read_bytes(originals[3].string());
  const Image image3 = decode_image(png3.data(), png3.size());
  write_bytes(dir.file("reencoded.jpg"), encode_jpeg(image3, 85));
  lines.push_back(path_line("reencoded", dir.file("reencoded.jpg")));
  const std::vector<std::uint8_t> png7 = read_bytes(originals[7].string());
  Image brighter = decode_image(png7.data(), png7.size());
  for (std::uint8_t& v : brighter.rgb) v = static_cast<std::uint8_t>(std::min(255, v * 11 / 10));
  write_bytes(dir.file("brighter.jpg"), encode_jpeg(brighter, 95));
  lines.push_back(path_line("brighter", dir.file("brighter.jpg")));
  write_bytes(dir.file("same_bytes.png"), png7);
  lines.push_back(path_line("same_bytes", dir.file("same_bytes.png")));
  // The same picture with other bytes: a tEXt chunk after the IHDR chunk.
  write_bytes(dir.file("resaved.png"), with_text_chunk(png7, "Comment", "re-saved"));
  lines.push_back(path_line("resaved", dir.file("resaved.png")));
  // Bad files.
  write_bytes(dir.file("notes.txt"), {'h', 'e', 'l', 'l', 'o'});
  lines.push_back(path_line("not_an_image", dir.file("notes.txt")));
  std::vector<std::uint8_t> truncated = png3;
  truncated.resize(truncated.size() / 2);
  write_bytes(dir.file("truncated.png"), truncated);
  lines.push_back(path_line("truncated", dir.file("truncated.png")));
  write_bytes(dir.file("bomb.png"), png_claiming(30000, 30000));
  lines.push_back(path_line("bomb", dir.file("bomb.png")));

  const std::string manifest = dir.file("m.jsonl");
  {
    std::ofstream out(manifest);
    for (const std::string& line : lines) out << line << "\n";
  }
  ManifestReaderOptions reading;
  reading.image = pipeline.image_reading();
  CHECK(reading.image.width == 28);  // the default embedder's working image
  ManifestReader reader(manifest, reading);
  pipeline.ingest_batch("m.jsonl", file_checksum(manifest), reader);

  std::map<std::string, std::pair<winnow::store::SampleRecord, std::string>> by_key;
  pipeline.store().for_each_sample_with_decision(
      [&](const winnow::store::SampleRecord& s,
          const winnow::store::MetadataStore::DecisionText& d) {
        by_key[s.external_key] = {s, d.reason};
      });
  auto status = [&](const std::string& key) { return by_key.at(key).first.status; };
  auto reason = [&](const std::string& key) { return by_key.at(key).second; };
  auto original_id = [&](std::size_t i) { return by_key.at("orig" + std::to_string(i)).first.id; };
  using winnow::store::SampleStatus;

  CHECK(status("reencoded") == SampleStatus::duplicate_near);
  CHECK(by_key.at("reencoded").first.duplicate_of == original_id(3));
  CHECK(status("brighter") == SampleStatus::duplicate_near);
  CHECK(by_key.at("brighter").first.duplicate_of == original_id(7));
  CHECK(status("same_bytes") == SampleStatus::duplicate_exact);
  CHECK(status("resaved") == SampleStatus::duplicate_exact);
  CHECK(by_key.at("resaved").first.duplicate_of == original_id(7));
  CHECK(status("not_an_image") == SampleStatus::rejected);
  CHECK_THAT(reason("not_an_image"), Catch::Contains("is not an image"));
  CHECK(status("truncated") == SampleStatus::rejected);
  CHECK_THAT(reason("truncated"), Catch::Contains("is a PNG file that cannot be decoded"));
  CHECK(status("bomb") == SampleStatus::rejected);
  CHECK_THAT(reason("bomb"), Catch::Contains("over the limit"));
  // Distinct drawings stay distinct. The set itself holds near-identical
  // drawings (ninja_tux is baby_tux with a mask; two of Ralf's penguins), so
  // a few originals may rightly be flagged, but no more.
  int originals_flagged = 0;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    originals_flagged += status("orig" + std::to_string(i)) == SampleStatus::duplicate_near;
  }
  CHECK(originals_flagged <= 3);

  // A later batch compares with the stored working images, not the files.
  fs::remove(dir.file("reencoded.jpg"));
  write_bytes(dir.file("again.jpg"), encode_jpeg(image3, 70));
  const std::string second = dir.file("m2.jsonl");
  {
    std::ofstream out(second);
    out << path_line("again", dir.file("again.jpg")) << "\n";
  }
  ManifestReader reader2(second, reading);
  pipeline.ingest_batch("m2.jsonl", file_checksum(second), reader2);
  const auto again = pipeline.store().find_by_external_key("again");
  REQUIRE(again.has_value());
  CHECK(again->status == SampleStatus::duplicate_near);
  CHECK(again->duplicate_of == original_id(3));
}
