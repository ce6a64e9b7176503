#include "winnow/curation/dataset/lookup/stored_record.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "winnow/curation/dedup/near_duplicate_verifier.h"

namespace winnow::curation {

store::StoredContent stored_content(const ManifestRecord& record) {
  store::StoredContent content;
  content.kind = to_string(record.kind);
  std::size_t width = record.width;
  std::size_t height = record.height;
  if (record.kind == ContentKind::text) {
    content.bytes = record.text;
  } else if (record.has_image()) {
    // A decoded image file keeps its working image: later batches verify
    // near duplicates against it without reading the file again.
    // With a colour working image, kind "image-colour": the grey pixels, then
    // the colour image's RGB bytes.
    if (record.kind == ContentKind::path) {
      content.kind = record.colour.empty() ? "image" : "image-colour";
    }
    content.bytes.assign(record.pixels.begin(), record.pixels.end());
    content.bytes.append(record.colour.begin(), record.colour.end());
    if (width == 0 || height == 0) dedup::image_shape(record, width, height);
  } else {
    content.bytes = record.resolved_path;
  }
  content.width = static_cast<std::int64_t>(width);
  content.height = static_cast<std::int64_t>(height);
  return content;
}

std::optional<ManifestRecord> stored_record(std::int64_t sample_id,
                                            const store::StoredContent& content) {
  ManifestRecord record;
  record.key = std::to_string(sample_id);
  if (content.kind == "pixels" || content.kind == "image" || content.kind == "image-colour") {
    record.kind = content.kind == "pixels" ? ContentKind::pixels : ContentKind::path;
    record.width = static_cast<std::size_t>(content.width);
    record.height = static_cast<std::size_t>(content.height);
    std::size_t grey = content.bytes.size();
    if (content.kind == "image-colour") {
      grey = std::min(grey, record.width * record.height);
      record.colour.assign(content.bytes.begin() + static_cast<std::ptrdiff_t>(grey),
                           content.bytes.end());
    }
    record.pixels.assign(content.bytes.begin(),
                         content.bytes.begin() + static_cast<std::ptrdiff_t>(grey));
  } else if (content.kind == "text") {
    record.kind = ContentKind::text;
    record.text = content.bytes;
  } else {
    return std::nullopt;
  }
  return record;
}

}  // namespace winnow::curation
