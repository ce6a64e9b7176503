#include "winnow/curation/readers/idx_importer.h"

#include <filesystem>

#include <fmt/format.h>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/error.h"

namespace winnow::curation::readers {

std::vector<ManifestRecord> import_idx(const std::string& images_path,
                                       const std::string& labels_path,
                                       const std::string& key_prefix, const std::string& source) {
  const dataset::IdxImages images = dataset::read_idx_images(images_path);
  std::vector<std::uint8_t> labels;
  if (!labels_path.empty()) {
    labels = dataset::read_idx_labels(labels_path);
    WINNOW_THROW_IF_NOT(labels.size() == images.count,
                        "IDX files disagree: '{}' has {} images but '{}' has {} labels",
                        images_path, images.count, labels_path, labels.size());
  }
  const std::string src =
      source.empty() ? std::filesystem::path(images_path).filename().string() : source;
  std::vector<ManifestRecord> records(images.count);
  for (std::size_t i = 0; i < images.count; ++i) {
    ManifestRecord& rec = records[i];
    rec.key = fmt::format("{}-{:06d}", key_prefix, i);
    rec.kind = ContentKind::pixels;
    rec.pixels.assign(images.image(i), images.image(i) + images.image_size());
    rec.width = images.cols;
    rec.height = images.rows;
    if (!labels.empty()) {
      rec.label = std::to_string(labels[i]);
    }
    rec.source = src;
    rec.content_hash =
        dedup::content_hash(ContentKind::pixels, rec.pixels.data(), rec.pixels.size());
  }
  return records;
}

}  // namespace winnow::curation::readers
