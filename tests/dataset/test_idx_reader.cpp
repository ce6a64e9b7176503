#include <catch2/catch.hpp>

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "winnow/dataset/idx_reader.h"
#include "winnow/error.h"

using namespace winnow::dataset;
using winnow::test::TempDir;

namespace {

const std::string kFashionTestImages =
    "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
const std::string kFashionTestLabels =
    "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  std::string s = be32(0x803) + be32(count) + be32(rows) + be32(cols);
  for (std::uint32_t i = 0; i < count * rows * cols; ++i) {
    s.push_back(static_cast<char>(i & 0xFF));
  }
  return s;
}

std::string write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  gzclose(f);
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("the real Fashion-MNIST test set is read", "[idx]") {
  const IdxImages images = read_idx_images(kFashionTestImages);
  CHECK(images.count == 10000);
  CHECK(images.rows == 28);
  CHECK(images.cols == 28);
  CHECK(images.pixels.size() == 10000u * 784u);
  const std::vector<std::uint8_t> labels = read_idx_labels(kFashionTestLabels);
  REQUIRE(labels.size() == 10000);
  CHECK(*std::max_element(labels.begin(), labels.end()) == 9);
  CHECK(labels[0] == 9);  // the first test image is an ankle boot
}

TEST_CASE("plain and gzipped IDX files read the same", "[idx]") {
  TempDir dir;
  const std::string bytes = idx_images(3, 4, 5);
  const IdxImages a = read_idx_images(write_file(dir.file("plain.idx"), bytes));
  const IdxImages b = read_idx_images(write_gzip(dir.file("packed.idx.gz"), bytes));
  CHECK(a.count == 3);
  CHECK(a.rows == 4);
  CHECK(a.cols == 5);
  CHECK(a.pixels == b.pixels);
  CHECK(a.image(2)[0] == 40);
}

TEST_CASE("corrupt and truncated IDX data are errors that name the problem", "[idx]") {
  const std::string good = idx_images(2, 3, 3);
  CHECK_NOTHROW(parse_idx_images(good));
  CHECK_THROWS_WITH(parse_idx_images(good.substr(0, good.size() - 1), "t.idx"),
                    Catch::Contains("t.idx") && Catch::Contains("truncated"));
  CHECK_THROWS_WITH(parse_idx_images(good.substr(0, 6)), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(parse_idx_images(good + "x"), Catch::Contains("trailing bytes"));
  std::string bad_magic = good;
  bad_magic[3] = 0x01;
  CHECK_THROWS_WITH(parse_idx_images(bad_magic), Catch::Contains("magic"));
  CHECK_THROWS_WITH(parse_idx_images(idx_images(0, 3, 3)), Catch::Contains("zero dimension"));
  const std::string huge = be32(0x803) + be32(0xFFFFFFFF) + be32(60000) + be32(60000);
  CHECK_THROWS_WITH(parse_idx_images(huge), Catch::Contains("limit"));
  CHECK_THROWS_WITH(parse_idx_labels(good), Catch::Contains("magic"));
  CHECK_THROWS_WITH(parse_idx_labels(be32(0x801) + be32(5) + "abc"), Catch::Contains("truncated"));
}

TEST_CASE("missing files and cut gzip streams are errors", "[idx]") {
  TempDir dir;
  CHECK_THROWS_WITH(read_idx_images(dir.file("none.gz")), Catch::Contains("none.gz"));
  // A gzip stream cut in half.
  const std::string packed = read_file(write_gzip(dir.file("cut.gz"), idx_images(50, 28, 28)));
  const std::string cut = write_file(dir.file("cut2.gz"), packed.substr(0, packed.size() / 2));
  CHECK_THROWS_AS(read_idx_images(cut), winnow::Error);
}
