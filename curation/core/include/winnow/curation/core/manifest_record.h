// One sample of a curation manifest: the parsed form of a JSON Lines record.
//
// A record has a non-empty `key` and exactly one content field: `path` (a
// file whose bytes are the content), `text` (UTF-8) or `pixels` (8-bit
// grey levels, optionally with `width`/`height`). A `path` naming an image
// file also carries the decoded file's grey working image in `pixels` once
// the reader has decoded it (ManifestReaderOptions::image). Optional: `label`,
// `source`, `annotations` (list of {annotator, label}) and `embedding`.
// See docs/curation.md for the wire format and the rejection reasons.
// `winnow import-annotations` makes records without content (kind none):
// a key, annotations and perhaps a label, from a labelling tool's export
// (annotation_importer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/image/image_quality.h"

namespace winnow::curation {

// What a record's content is; none: annotations only (no manifest line
// has it: the manifest requires content).
enum class ContentKind { path, text, pixels, none };

// "path", "text", "pixels" or "none".
const char* to_string(ContentKind kind);

// One annotator's label for a sample (labels are kept as strings; integer
// labels in the manifest become their decimal form).
struct Annotation {
  std::string annotator;
  std::string label;
};

// What decoding an image file measured of its quality (image_file.cpp); the
// issues are judged from it at ingest (image_issues.h).
struct ImageMeasurement {
  std::size_t width = 0;  // of the file, from its header
  std::size_t height = 0;
  image::ImageQualityScores scores;
};

struct ManifestRecord {
  std::size_t line = 0;  // 1-based line in the manifest (0 when not from one)
  std::string key;
  ContentKind kind = ContentKind::text;
  std::string path;           // kind == path (as written in the manifest)
  std::string resolved_path;  // kind == path: the file actually read
  std::string text;           // kind == text
  // Row-major grey levels: kind == pixels, or a decoded image file's working
  // image (kind == path; see has_image).
  std::vector<std::uint8_t> pixels;
  std::size_t width = 0;   // of pixels; 0 when not given
  std::size_t height = 0;  // of pixels; 0 when not given
  // A decoded image file's colour working image: row-major RGB, square
  // (ColourImageVerifierOptions::side); empty for every other record.
  std::vector<std::uint8_t> colour;
  std::optional<std::string> label;
  std::string source;
  std::vector<Annotation> annotations;
  std::vector<float> embedding;  // empty when the manifest gave none
  // Set when the reader decoded the `path` record's file as an image.
  std::optional<ImageMeasurement> image_quality;
  // Hex XXH3-128 of the content (see content_hash.h); empty if not computed.
  std::string content_hash;
  // A manifest line with annotations and no content: a later round of
  // annotations for a stored sample, refused for any other key (annotation
  // files make new annotation-only samples; manifests do not).
  bool stored_sample_only = false;

  // True when the content can be compared as an image: a pixels record, or
  // an image file the reader decoded.
  bool has_image() const { return !pixels.empty(); }
};

}  // namespace winnow::curation
