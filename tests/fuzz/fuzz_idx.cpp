// libFuzzer target: IDX image and label parsing from memory. Errors must be
// winnow::Error, never a crash or an allocation beyond the input's size (a
// header declaring gigabytes over a few bytes of data must fail cheaply).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "winnow/dataset/idx_reader.h"
#include "winnow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)winnow::dataset::parse_idx_images(bytes, "fuzz");
  } catch (const winnow::Error&) {
  }
  try {
    (void)winnow::dataset::parse_idx_labels(bytes, "fuzz");
  } catch (const winnow::Error&) {
  }
  return 0;
}
