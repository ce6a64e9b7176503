// One sample of a curation manifest: the parsed form of a JSON Lines record.
//
// A record has a non-empty `key` and exactly one content field: `path` (a
// file whose bytes are the content), `text` (UTF-8) or `pixels` (8-bit
// grey levels, optionally with `width`/`height`). Optional: `label`,
// `source`, `annotations` (list of {annotator, label}) and `embedding`.
// See docs/curation.md for the wire format and the rejection reasons.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace winnow::curation {

// What a record's content is.
enum class ContentKind { path, text, pixels };

// "path", "text" or "pixels".
const char* to_string(ContentKind kind);

// One annotator's label for a sample (labels are kept as strings; integer
// labels in the manifest become their decimal form).
struct Annotation {
  std::string annotator;
  std::string label;
};

struct ManifestRecord {
  std::size_t line = 0;  // 1-based line in the manifest (0 when not from one)
  std::string key;
  ContentKind kind = ContentKind::text;
  std::string path;                  // kind == path (as written in the manifest)
  std::string resolved_path;         // kind == path: the file actually read
  std::string text;                  // kind == text
  std::vector<std::uint8_t> pixels;  // kind == pixels, row-major grey levels
  std::size_t width = 0;             // kind == pixels; 0 when not given
  std::size_t height = 0;            // kind == pixels; 0 when not given
  std::optional<std::string> label;
  std::string source;
  std::vector<Annotation> annotations;
  std::vector<float> embedding;  // empty when the manifest gave none
  // Hex XXH3-128 of the content (see content_hash.h); empty if not computed.
  std::string content_hash;
};

}  // namespace winnow::curation
