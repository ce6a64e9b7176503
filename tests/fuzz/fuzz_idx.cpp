// libFuzzer target: IDX image and label parsing from memory. Errors must be
// winnow::Error, never a crash or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "winnow/curation/idx_importer.h"
#include "winnow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Skip headers that declare more than the input holds by far (the parser
  // would allocate the declared size before finding the truncation).
  if (size >= 16) {
    auto be = [&](std::size_t o) {
      return (std::uint64_t{data[o]} << 24) | (std::uint64_t{data[o + 1]} << 16) |
             (std::uint64_t{data[o + 2]} << 8) | std::uint64_t{data[o + 3]};
    };
    if (be(4) * be(8) * be(12) > (std::uint64_t{64} << 20)) {
      return 0;
    }
  }
  try {
    (void)winnow::curation::parse_idx_images(bytes, "fuzz");
  } catch (const winnow::Error&) {
  }
  try {
    (void)winnow::curation::parse_idx_labels(bytes, "fuzz");
  } catch (const winnow::Error&) {
  }
  return 0;
}
