#include "winnow/curation/dataset/embedder_choice.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/transaction.h"
#include "winnow/store/vector_table.h"

namespace winnow::curation {

namespace {

constexpr std::size_t kPeekedLines = 1000;

}  // namespace

std::string default_embedder_for(ContentKind kind, std::size_t dim, std::size_t width,
                                 std::size_t height) {
  if (dim > 0) return fmt::format("provided(dim={})", dim);
  const bool default_size = width == 28 && height == 28;
  if (kind == ContentKind::pixels && width > 0 && height > 0 && !default_size) {
    // The Fourier features take 2 pixels per band a side: 6 bands from 12 up.
    const std::size_t bands = std::min<std::size_t>(6, std::min(width, height) / 2);
    return bands > 0
               ? fmt::format("pixels(width={},height={},pool=1,fourier={})", width, height, bands)
               : fmt::format("pixels(width={},height={},pool=1)", width, height);
  }
  switch (kind) {
    case ContentKind::text:
      return "hashed-ngrams(n=3,dim=256)";
    case ContentKind::path:  // image files, in colour
      return "pixels(width=32,height=32,fourier=6,colour=1)";
    case ContentKind::pixels:
    case ContentKind::none:
      break;
  }
  return CurationConfig{}.embedder;
}

std::optional<BatchContent> manifest_content(const std::string& path, bool follow_link) {
  try {
    readers::ManifestReaderOptions options;
    options.hash_content = false;  // the kind is in the line; its file is not read
    options.follow_manifest_link = follow_link;
    readers::ManifestReader reader(path, options);
    readers::ManifestEntry entry;
    while (reader.lines_read() < kPeekedLines && reader.next(entry)) {
      if (entry.ok() && entry.record->kind != ContentKind::none) {
        const ManifestRecord& r = *entry.record;
        return BatchContent{r.kind, r.embedding.size(), r.width, r.height};
      }
    }
  } catch (const std::exception&) {
    // Unreadable: the batch's own reading reports it.
  }
  return std::nullopt;
}

std::optional<std::string> choose_embedder(const std::string& db_path,
                                           const BatchContent& content) {
  if (!std::filesystem::is_regular_file(db_path)) return std::nullopt;  // opening says why
  store::MetadataStore store(db_path);
  store::Transaction tx(store.database());
  const std::optional<std::string> text = store.get_meta(CurationConfig::kMetaKey);
  if (!text) return std::nullopt;  // not initialised: opening the dataset says so
  CurationConfig config = CurationConfig::from_json(*text);
  const std::string chosen =
      default_embedder_for(content.kind, content.embedding_dim, content.width, content.height);
  if (!config.embedder_auto || config.embedder == chosen) return std::nullopt;
  if (store::VectorTable(store.database()).any_row()) return std::nullopt;
  config.embedder = chosen;
  config.validate();
  store.set_meta(CurationConfig::kMetaKey, config.to_json());
  store.record_writer();
  tx.commit();
  return chosen;
}

}  // namespace winnow::curation
