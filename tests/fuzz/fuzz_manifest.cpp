// libFuzzer target: one manifest line through parse_manifest_line and the
// whole input through ManifestReader (small line limit). Must never crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "winnow/curation/manifest_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  winnow::curation::ManifestReaderOptions options;
  options.max_line_bytes = 4096;
  options.expected_embedding_dim = 4;
  options.hash_content = false;  // no file reads from fuzzed paths
  (void)winnow::curation::parse_manifest_line(input, 1, options);
  std::istringstream in(input);
  winnow::curation::ManifestReader reader(in, "fuzz", options);
  winnow::curation::ManifestEntry entry;
  while (reader.next(entry)) {
  }
  return 0;
}
