#include "winnow/curation/dataset/curated_samples.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/core/regular_file.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/error.h"
#include "winnow/image/image_decoder.h"
#include "winnow/image/image_resize.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/sample_history.h"
#include "winnow/store/vector_table.h"

namespace winnow::curation {

namespace {

// Numeric labels (their own ids, >= 0) by value first, then names (negative
// ids) in the order of their names.
std::vector<std::int64_t> class_order(const std::vector<std::int64_t>& labels,
                                      const LabelNames& names) {
  std::vector<std::int64_t> order = labels;
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    if ((a >= 0) != (b >= 0)) return a >= 0;
    if (a >= 0) return a < b;
    return names.name_of(a) < names.name_of(b);
  });
  order.erase(std::unique(order.begin(), order.end()), order.end());
  return order;
}

// The file an image-file sample was read from: named by its ingest event's
// details ("file"), as the gallery reads it; "" when none does.
std::string ingested_file(store::MetadataStore& store, std::int64_t id) {
  for (const store::EventRecord& event : store.events_of(id)) {
    if (event.details_json.empty()) continue;
    const nlohmann::json details = nlohmann::json::parse(event.details_json, nullptr, false);
    if (details.is_object() && details.contains("file") && details["file"].is_string()) {
      return details["file"].get<std::string>();
    }
  }
  return {};
}

TrainingContent pixels_at(const image::Image& image, const PixelShape& shape) {
  const image::Image sized = image::resize_area(image, shape.width, shape.height);
  TrainingContent content;
  content.width = shape.width;
  content.height = shape.height;
  content.channels = shape.colour ? 3 : 1;
  content.pixels = shape.colour ? sized.rgb : image::grey_levels(sized);
  return content;
}

// Stored grey levels (width x height) at `shape`: as they are at their own
// size, resampled otherwise (as RGB, the form resize_area takes).
TrainingContent from_grey(const std::uint8_t* grey, std::size_t width, std::size_t height,
                          const PixelShape& shape) {
  const std::size_t pixels = width * height;
  if (!shape.colour && shape.width == width && shape.height == height) {
    TrainingContent content;
    content.width = width;
    content.height = height;
    content.channels = 1;
    content.pixels.assign(grey, grey + pixels);
    return content;
  }
  image::Image image;
  image.width = width;
  image.height = height;
  image.rgb.reserve(pixels * 3);
  for (std::size_t i = 0; i < pixels; ++i) image.rgb.insert(image.rgb.end(), 3, grey[i]);
  return pixels_at(image, shape);
}

// The working image the store keeps of an image file (grey; and a square
// colour one with a colour embedder) at `shape`, when it is no smaller: that
// file resampled as pixels_at would, so the file need not be decoded again.
// None when the shape asks for more than is stored.
std::optional<TrainingContent> from_working_image(const store::StoredContent& stored,
                                                  const PixelShape& shape) {
  const auto width = static_cast<std::size_t>(stored.width);
  const auto height = static_cast<std::size_t>(stored.height);
  const std::size_t grey = width * height;
  if (grey == 0 || stored.bytes.size() < grey) return std::nullopt;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(stored.bytes.data());
  if (!shape.colour) {
    if (shape.width > width || shape.height > height) return std::nullopt;
    return from_grey(bytes, width, height, shape);
  }
  const std::size_t colour = stored.bytes.size() - grey;
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(colour / 3.0)));
  if (stored.kind != "image-colour" || side * side * 3 != colour || shape.width > side ||
      shape.height > side) {
    return std::nullopt;
  }
  image::Image image;
  image.width = side;
  image.height = side;
  image.rgb.assign(bytes + grey, bytes + grey + colour);
  return pixels_at(image, shape);
}

}  // namespace

CuratedSamples::CuratedSamples(const std::string& db, const CuratedSampleOptions& options)
    : db_(db), options_(options) {
  store::DatabaseOptions reading;
  reading.read_only = true;
  store_ = std::make_unique<store::MetadataStore>(db, reading);
  store::SampleHistory history(store_->database());
  const std::int64_t now = history.revision();
  revision_ = options.revision.value_or(now);
  WINNOW_THROW_IF_NOT(revision_ >= 0 && revision_ <= now,
                      "{}: revision {} does not exist (the dataset is at revision {})", db,
                      revision_, now);
  WINNOW_THROW_IF_NOT(!options.statuses.empty(), "{}: no sample status asked for", db);
  const std::vector<std::int64_t> reviewed = history.reviewed_at(revision_);
  history.for_each_at(revision_, [&](const store::SampleState& s) {
    if (std::find(options.statuses.begin(), options.statuses.end(), s.status) ==
        options.statuses.end()) {
      return;
    }
    const bool by_person = std::binary_search(reviewed.begin(), reviewed.end(), s.sample_id);
    samples_.push_back({s.sample_id, s.external_key, s.label, -1, s.status, by_person});
  });
  const LabelNames names = LabelNames::read(*store_);
  std::vector<std::int64_t> labels;
  for (const CuratedSample& s : samples_) {
    if (s.label) labels.push_back(*s.label);
  }
  std::map<std::int64_t, int> index;
  for (std::int64_t label : class_order(labels, names)) {
    index[label] = static_cast<int>(class_names_.size());
    class_names_.push_back(names.name_of(label));
  }
  for (CuratedSample& s : samples_) {
    if (s.label) s.class_index = index.at(*s.label);
  }
}

CuratedSamples::~CuratedSamples() = default;

TrainingContent CuratedSamples::content(std::size_t i, const PixelShape& shape) const {
  const CuratedSample& sample = at(i);
  WINNOW_THROW_IF_NOT(
      shape.width > 0 && shape.height > 0 && shape.width <= 4096 && shape.height <= 4096,
      "pixel shape {} x {}: each side must be 1 to 4096", shape.width, shape.height);
  std::unique_lock<std::mutex> reading(store_mutex_);  // one SQLite connection
  store::VectorTable table(store_->database());
  std::optional<store::StoredContent> stored = table.content_of(sample.id);
  if (!stored) {
    // Set aside since the revision read (a better copy of an image file
    // arrived, say): an image file is read again from the file its ingest
    // event names; other contents are gone.
    std::string file = ingested_file(*store_, sample.id);
    WINNOW_THROW_IF_NOT_KIND(!file.empty(), not_found,
                             "{}: sample '{}' (id {}) has no stored content: it was set aside "
                             "after revision {} (winnow export names its status now)",
                             db_, sample.key, sample.id, revision_);
    stored = store::StoredContent{"path", 0, 0, std::move(file)};
  }
  if (stored->kind == "text") {
    TrainingContent content;
    content.is_text = true;
    content.text = stored->bytes;
    return content;
  }
  if (stored->kind == "pixels") {
    const auto width = static_cast<std::size_t>(stored->width);
    const auto height = static_cast<std::size_t>(stored->height);
    WINNOW_THROW_IF_NOT_KIND(width * height == stored->bytes.size(), corrupt,
                             "{}: sample '{}' keeps {} pixels for {} x {}", db_, sample.key,
                             stored->bytes.size(), width, height);
    return from_grey(reinterpret_cast<const std::uint8_t*>(stored->bytes.data()), width, height,
                     shape);
  }
  std::string file;
  if (stored->kind == "path") {
    file = stored->bytes;
  } else {
    WINNOW_THROW_IF_NOT_KIND(stored->kind == "image" || stored->kind == "image-colour", corrupt,
                             "{}: sample '{}' keeps content of unknown kind '{}'", db_, sample.key,
                             stored->kind);
    if (std::optional<TrainingContent> kept = from_working_image(*stored, shape)) return *kept;
    file = ingested_file(*store_, sample.id);
    WINNOW_THROW_IF_NOT_KIND(!file.empty(), not_found,
                             "{}: sample '{}' (id {}) is an image file whose path the store "
                             "does not name",
                             db_, sample.key, sample.id);
  }
  reading.unlock();
  FileLimits limits;
  limits.follow_links = true;  // the user's own files, as `winnow ingest` reads them
  std::vector<unsigned char> bytes;
  try {
    bytes = read_regular_file(file, limits, "image file");
  } catch (const Error& e) {
    throw Error(fmt::format("sample '{}' (id {}): its file cannot be read: {}", sample.key,
                            sample.id, e.what()),
                __func__, __FILE__, __LINE__, e.kind());
  }
  image::DecodeOptions decoding;
  decoding.min_width = shape.width;
  decoding.min_height = shape.height;
  image::Image image;
  try {
    image = image::decode_image(bytes.data(), bytes.size(), decoding);
  } catch (const Error& e) {
    throw Error(fmt::format("sample '{}' (id {}): {} is not an image winnow decodes: {}",
                            sample.key, sample.id, file, e.what()),
                __func__, __FILE__, __LINE__, e.kind());
  }
  return pixels_at(image, shape);
}

}  // namespace winnow::curation
