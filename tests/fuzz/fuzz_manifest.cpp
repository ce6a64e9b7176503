// libFuzzer target: one manifest line through parse_manifest_line (which must
// never throw) and the whole input through ManifestReader (small line limit),
// which may only throw winnow::Error (for a binary-looking input). Every
// rejection reason must be valid UTF-8: reasons are stored and exported as
// JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/error.h"

namespace {

void check_reason_is_utf8(const winnow::curation::readers::ManifestEntry& entry) {
  if (entry.rejection) {
    // dump() throws type_error 316 on invalid UTF-8: a crash for the fuzzer.
    (void)nlohmann::json(entry.rejection->reason).dump();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  winnow::curation::readers::ManifestReaderOptions options;
  options.max_line_bytes = 4096;
  options.expected_embedding_dim = 4;
  options.hash_content = false;  // no file reads from fuzzed paths
  check_reason_is_utf8(winnow::curation::readers::parse_manifest_line(input, 1, options));
  std::istringstream in(input);
  winnow::curation::readers::ManifestReader reader(in, "fuzz", options);
  winnow::curation::readers::ManifestEntry entry;
  try {
    while (reader.next(entry)) {
      check_reason_is_utf8(entry);
    }
  } catch (const winnow::Error&) {
  }
  return 0;
}
