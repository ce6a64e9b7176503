// Reading IDX image sets (MNIST, Fashion-MNIST), gzipped or plain.
//
// Images: magic 0x00000803 (unsigned bytes, 3 dimensions), then big-endian
// u32 count, rows, cols and count*rows*cols pixel bytes. Labels: magic
// 0x00000801, u32 count, count bytes. Files are read through zlib's gzread,
// which passes plain files through unchanged. Bad magic, zero or absurd
// dimensions, truncated data and trailing bytes throw winnow::Error naming
// the file and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::dataset {

struct IdxImages {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols, row-major

  std::size_t image_size() const { return rows * cols; }
  const std::uint8_t* image(std::size_t i) const { return pixels.data() + i * rows * cols; }
};

// Largest pixel payload accepted (guards against absurd headers).
constexpr std::size_t kMaxIdxBytes = std::size_t{1} << 32;

IdxImages read_idx_images(const std::string& path);
std::vector<std::uint8_t> read_idx_labels(const std::string& path);

// The same parsers over uncompressed bytes in memory; `name` appears in errors.
IdxImages parse_idx_images(std::string_view bytes, const std::string& name = "<memory>");
std::vector<std::uint8_t> parse_idx_labels(std::string_view bytes,
                                           const std::string& name = "<memory>");

}  // namespace winnow::dataset
