#include "winnow/curation/readers/manifest_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

#include "embedding_field.h"

namespace winnow::curation::readers {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxNesting = 64;

// Deepest bracket nesting outside strings (guards the JSON parser's stack).
std::size_t nesting_depth(std::string_view line) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// A JSON value as it appears in a reason (a long string is cut short).
std::string describe_value(const nlohmann::json& value) {
  return printable_text(value.dump(), 64);
}

bool is_blank(std::string_view line) {
  for (const char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      return false;
    }
  }
  return true;
}

// Label: a string, or an integer kept as its decimal form.
bool read_label(const json& value, std::string& out) {
  if (value.is_string()) {
    out = value.get<std::string>();
    return true;
  }
  if (value.is_number_integer()) {
    out = value.is_number_unsigned() ? std::to_string(value.get<std::uint64_t>())
                                     : std::to_string(value.get<std::int64_t>());
    return true;
  }
  return false;
}

ManifestEntry reject(std::size_t line, std::string key, std::string reason) {
  ManifestEntry entry;
  entry.rejection = Rejection{line, std::move(key), std::move(reason), {}};
  return entry;
}

// Each step below reads one part of a record and returns why the record is
// refused, or nothing when that part is fine.
using Refusal = std::optional<std::string>;

// The line's size and nesting, then the JSON text itself: `text`, the line
// or what split_embedding_field left of it.
Refusal parse_document(std::string_view line, std::string_view text,
                       const ManifestReaderOptions& options, json& doc) {
  if (line.size() > options.max_line_bytes) {
    return fmt::format("line is {} bytes, longer than the limit of {} bytes", line.size(),
                       options.max_line_bytes);
  }
  if (nesting_depth(line) > kMaxNesting) {
    return fmt::format("JSON nested deeper than {} levels", kMaxNesting);
  }
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // nlohmann's message quotes the input near the error ("last read: ..."):
    // it can be long or hold invalid UTF-8, so only a cleaned excerpt is kept.
    std::string reason = "invalid JSON: " + printable_text(e.what(), 240);
    // e.byte is one past the offending character: say why NaN is refused.
    const std::string_view at =
        e.byte >= 1 && e.byte <= line.size() ? line.substr(e.byte - 1) : std::string_view();
    if (at.substr(0, 3) == "NaN" || at.substr(0, 8) == "Infinity") {
      reason += " (JSON has no NaN or Infinity)";
    }
    return reason;
  } catch (const json::exception& e) {  // e.g. out_of_range: a number overflowing a double
    return "invalid JSON: " + printable_text(e.what(), 240);
  }
  if (!doc.is_object()) {
    return fmt::format("record is a JSON {}, not an object", doc.type_name());
  }
  return std::nullopt;
}

Refusal read_key(const json& doc, ManifestRecord& rec) {
  const auto key_it = doc.find("key");
  if (key_it == doc.end()) {
    return "missing field 'key'";
  }
  if (!key_it->is_string()) {
    return fmt::format("field 'key' must be a string, got {}", key_it->type_name());
  }
  rec.key = key_it->get<std::string>();
  if (rec.key.empty()) {
    return "field 'key' is empty";
  }
  return std::nullopt;
}

Refusal read_path(const json& v, const ManifestReaderOptions& options, ManifestRecord& rec) {
  if (!v.is_string()) {
    return fmt::format("field 'path' must be a string, got {}", v.type_name());
  }
  rec.kind = ContentKind::path;
  rec.path = v.get<std::string>();
  if (rec.path.empty()) {
    return "field 'path' is empty";
  }
  std::filesystem::path p(rec.path);
  if (p.is_relative() && !options.base_dir.empty()) {
    p = std::filesystem::path(options.base_dir) / p;
  }
  rec.resolved_path = p.string();
  return std::nullopt;
}

Refusal read_text(const json& v, ManifestRecord& rec) {
  if (!v.is_string()) {
    return fmt::format("field 'text' must be a string, got {}", v.type_name());
  }
  rec.kind = ContentKind::text;
  rec.text = v.get<std::string>();
  if (rec.text.empty()) {
    return "field 'text' is empty";
  }
  return std::nullopt;
}

// Optional `width` and `height` of a pixels record: both or neither, and
// matching the pixel count.
Refusal read_pixel_shape(const json& doc, ManifestRecord& rec) {
  for (const char* field : {"width", "height"}) {
    const auto it = doc.find(field);
    if (it == doc.end()) {
      continue;
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() <= 0) {
      return fmt::format("field '{}' must be a positive integer, got {}", field,
                         describe_value(*it));
    }
    (field[0] == 'w' ? rec.width : rec.height) = it->get<std::size_t>();
  }
  if ((rec.width == 0) != (rec.height == 0)) {
    return "fields 'width' and 'height' must be given together";
  }
  if (rec.width != 0 && (rec.width > rec.pixels.size() || rec.height > rec.pixels.size() ||
                         rec.width * rec.height != rec.pixels.size())) {
    return fmt::format("width {} x height {} does not match {} pixels", rec.width, rec.height,
                       rec.pixels.size());
  }
  return std::nullopt;
}

Refusal read_pixels(const json& doc, ManifestRecord& rec) {
  const json& v = doc.at("pixels");
  if (!v.is_array()) {
    return fmt::format("field 'pixels' must be an array of integers 0-255, got {}", v.type_name());
  }
  if (v.empty()) {
    return "field 'pixels' is empty";
  }
  rec.kind = ContentKind::pixels;
  rec.pixels.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& p = v[i];
    if (!p.is_number_integer() || p.get<std::int64_t>() < 0 || p.get<std::int64_t>() > 255 ||
        (p.is_number_unsigned() && p.get<std::uint64_t>() > 255)) {
      return fmt::format("pixels[{}] must be an integer 0-255, got {}", i, describe_value(p));
    }
    rec.pixels.push_back(static_cast<std::uint8_t>(p.get<std::int64_t>()));
  }
  return read_pixel_shape(doc, rec);
}

// Exactly one of `path`, `text` or `pixels`; or none, with annotations: a
// later round of annotations for a stored sample.
Refusal read_content(const json& doc, const ManifestReaderOptions& options, ManifestRecord& rec) {
  const bool has_path = doc.contains("path");
  const bool has_text = doc.contains("text");
  const bool has_pixels = doc.contains("pixels");
  const int content_fields = int{has_path} + int{has_text} + int{has_pixels};
  const auto annotations = doc.find("annotations");
  if (content_fields == 0 && annotations != doc.end() && annotations->is_array() &&
      !annotations->empty()) {
    rec.kind = ContentKind::none;
    rec.stored_sample_only = true;
    return std::nullopt;
  }
  if (content_fields == 0) {
    return "no content: one of 'path', 'text' or 'pixels' is required (annotations without "
           "content: `winnow import-annotations`)";
  }
  if (content_fields > 1) {
    return "several content fields: exactly one of 'path', 'text' or 'pixels' is allowed";
  }
  if (has_path) {
    return read_path(doc.at("path"), options, rec);
  }
  if (has_text) {
    return read_text(doc.at("text"), rec);
  }
  return read_pixels(doc, rec);
}

// The field `name` when present and not null, else nullptr.
const json* optional_field(const json& doc, const char* name) {
  const auto it = doc.find(name);
  return it != doc.end() && !it->is_null() ? &*it : nullptr;
}

Refusal read_label_and_source(const json& doc, ManifestRecord& rec) {
  if (const json* v = optional_field(doc, "label")) {
    std::string label;
    if (!read_label(*v, label)) {
      return fmt::format("field 'label' must be a string or an integer, got {}", v->type_name());
    }
    rec.label = std::move(label);
  }
  if (const json* v = optional_field(doc, "source")) {
    if (!v->is_string()) {
      return fmt::format("field 'source' must be a string, got {}", v->type_name());
    }
    rec.source = v->get<std::string>();
  }
  return std::nullopt;
}

Refusal read_annotations(const json& doc, ManifestRecord& rec) {
  const json* v = optional_field(doc, "annotations");
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_array()) {
    return fmt::format("field 'annotations' must be an array, got {}", v->type_name());
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& a = (*v)[i];
    if (!a.is_object()) {
      return fmt::format("annotations[{}] must be an object", i);
    }
    Annotation ann;
    const auto who = a.find("annotator");
    if (who == a.end() || !who->is_string() || who->get<std::string>().empty()) {
      return fmt::format("annotations[{}].annotator must be a non-empty string", i);
    }
    ann.annotator = who->get<std::string>();
    const auto lab = a.find("label");
    if (lab == a.end() || !read_label(*lab, ann.label)) {
      return fmt::format("annotations[{}].label must be a string or an integer", i);
    }
    rec.annotations.push_back(std::move(ann));
  }
  return std::nullopt;
}

// `split`: the values split_embedding_field read (numbers within a float's
// range, at least one), else nullptr.
Refusal read_embedding(const json& doc, const ManifestReaderOptions& options, ManifestRecord& rec,
                       std::vector<float>* split) {
  if (split != nullptr) {
    if (options.expected_embedding_dim != 0 && split->size() != options.expected_embedding_dim) {
      return fmt::format("field 'embedding' has {} values, expected {}", split->size(),
                         options.expected_embedding_dim);
    }
    rec.embedding = std::move(*split);
    return std::nullopt;
  }
  const json* v = optional_field(doc, "embedding");
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_array()) {
    return fmt::format("field 'embedding' must be an array of numbers, got {}", v->type_name());
  }
  if (v->empty()) {
    return "field 'embedding' is empty";
  }
  if (options.expected_embedding_dim != 0 && v->size() != options.expected_embedding_dim) {
    return fmt::format("field 'embedding' has {} values, expected {}", v->size(),
                       options.expected_embedding_dim);
  }
  rec.embedding.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& x = (*v)[i];
    if (!x.is_number()) {
      return fmt::format("embedding[{}] must be a number, got {}", i, x.type_name());
    }
    const double d = x.get<double>();
    // Checked before the cast: a double beyond float's range does not
    // convert to a float.
    if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
      return fmt::format("embedding[{}] is not finite as a 32-bit float ({})", i,
                         describe_value(x));
    }
    rec.embedding.push_back(static_cast<float>(d));
  }
  return std::nullopt;
}

Refusal hash_record_content(const ManifestReaderOptions& options, ManifestRecord& rec) {
  if (!options.hash_content) {
    return std::nullopt;
  }
  try {
    if (rec.kind == ContentKind::path)
      return load_path_content(rec, options.content, options.image);
    rec.content_hash = dedup::record_content_hash(rec, options.content);
  } catch (const Error& e) {
    if (rec.kind != ContentKind::path || options.content.roots.empty()) {
      return std::string(e.what());
    }
    // Whoever writes the inbox must not learn what exists outside the roots.
    return fmt::format(
        "path '{}' cannot be read: it must name a regular file of at most "
        "{} bytes beneath a content root, reached without symbolic links "
        "leading out",
        printable_text(rec.path, 240), options.content.max_bytes);
  }
  return std::nullopt;
}

// The steps after the key, in order; the first refusal wins.
Refusal read_record_fields(const json& doc, const ManifestReaderOptions& options,
                           ManifestRecord& rec, std::vector<float>* split_embedding) {
  if (Refusal r = read_content(doc, options, rec)) {
    return r;
  }
  if (Refusal r = read_label_and_source(doc, rec)) {
    return r;
  }
  if (Refusal r = read_annotations(doc, rec)) {
    return r;
  }
  if (Refusal r = read_embedding(doc, options, rec, split_embedding)) {
    return r;
  }
  return hash_record_content(options, rec);
}

}  // namespace

std::optional<std::string> load_path_content(ManifestRecord& record, const FileLimits& limits,
                                             const ImageReading& image) {
  // Read once: the bytes are hashed and, for an image file, decoded.
  const std::vector<unsigned char> bytes = read_regular_file(record.resolved_path, limits, "path");
  record.content_hash = dedup::content_hash(ContentKind::path, bytes.data(), bytes.size());
  return attach_working_image(bytes, image, record);
}

ManifestEntry parse_manifest_line(std::string_view line, std::size_t line_number,
                                  const ManifestReaderOptions& options) {
  json doc;
  // A provided embedding's numbers are read apart (embedding_field.h).
  std::optional<SplitEmbedding> split;
  if (line.size() <= options.max_line_bytes) split = split_embedding_field(line);
  Refusal refusal =
      parse_document(line, split ? std::string_view(split->rest) : line, options, doc);
  if (refusal && split) {  // refused in the general parser's words about the whole line
    split.reset();
    refusal = parse_document(line, line, options, doc);
  }
  if (refusal) {
    return reject(line_number, {}, std::move(*refusal));
  }
  ManifestRecord rec;
  rec.line = line_number;
  if (Refusal r = read_key(doc, rec)) {
    return reject(line_number, {}, std::move(*r));
  }
  if (Refusal r = read_record_fields(doc, options, rec, split ? &split->values : nullptr)) {
    return reject(line_number, rec.key, std::move(*r));
  }
  ManifestEntry entry;
  entry.record = std::move(rec);
  return entry;
}

ManifestReader::ManifestReader(const std::string& path, ManifestReaderOptions options)
    : owned_buf_(std::make_unique<RegularFileStreamBuf>(
          RegularFile(path, FileLimits{UINT64_MAX, {}, options.follow_manifest_link}, "manifest"))),
      owned_(std::make_unique<std::istream>(owned_buf_.get())),
      name_(path),
      options_(std::move(options)) {
  in_ = owned_.get();
  if (options_.base_dir.empty()) {
    options_.base_dir = std::filesystem::path(path).parent_path().string();
  }
}

ManifestReader::ManifestReader(std::istream& in, std::string name, ManifestReaderOptions options)
    : in_(&in), name_(std::move(name)), options_(std::move(options)) {}

bool ManifestReader::read_line() {
  line_buf_.clear();
  line_length_ = 0;
  too_long_ = false;
  std::streambuf* buf = in_->rdbuf();
  WINNOW_THROW_IF_NOT(buf != nullptr, "cannot read manifest '{}': no stream buffer", name_);
  bool any = false;
  for (;;) {
    int c;
    try {
      c = buf->sbumpc();
    } catch (const Error&) {
      throw;  // RegularFile's own error, with its kind
    } catch (const std::exception& e) {
      WINNOW_THROW("cannot read manifest '{}' at line {}: {}", name_, line_ + 1, e.what());
    }
    if (c == std::char_traits<char>::eof()) {
      WINNOW_THROW_IF_NOT(!in_->bad(), "cannot read manifest '{}' at line {}", name_, line_ + 1);
      return any;
    }
    any = true;
    ++bytes_read_;
    // JSON text never holds a raw NUL byte; one near the start means the file
    // is binary (an image, an archive, UTF-16), and every line would be junk.
    WINNOW_THROW_IF_NOT(c != 0 || bytes_read_ > kBinarySniffBytes || !options_.check_binary,
                        "manifest '{}' is not JSON Lines text: NUL byte at offset {} (a binary "
                        "file?)",
                        name_, bytes_read_ - 1);
    if (c == '\n') {
      return true;
    }
    ++line_length_;
    if (line_length_ > options_.max_line_bytes) {
      if (!too_long_) {
        too_long_ = true;
        line_buf_.clear();
        line_buf_.shrink_to_fit();
      }
      continue;
    }
    line_buf_.push_back(static_cast<char>(c));
  }
}

void ManifestEntry::complete() {
  if (!deferred) return;
  const std::function<void(ManifestEntry&)> work = std::move(deferred);
  deferred = nullptr;
  work(*this);
}

bool ManifestReader::next(ManifestEntry& entry) {
  if (!next_deferred(entry)) return false;
  entry.complete();
  return true;
}

bool ManifestReader::next_deferred(ManifestEntry& entry) {
  for (;;) {
    if (!read_line()) {
      return false;
    }
    ++line_;
    if (too_long_) {
      entry = ManifestEntry{};
      entry.rejection = Rejection{line_,
                                  {},
                                  fmt::format("line is {} bytes, longer than the limit of {} bytes",
                                              line_length_, options_.max_line_bytes),
                                  {}};
      return true;
    }
    if (!line_buf_.empty() && line_buf_.back() == '\r') {
      line_buf_.pop_back();
    }
    if (is_blank(line_buf_)) {
      continue;
    }
    entry = ManifestEntry{};
    entry.deferred = [this, line = line_buf_, number = line_](ManifestEntry& e) {
      e = parse_manifest_line(line, number, options_);
    };
    return true;
  }
}

std::string file_checksum(const std::string& path, bool follow_link) {
  return dedup::file_content_hash(path, FileLimits{UINT64_MAX, {}, follow_link});
}

std::vector<ManifestEntry> read_manifest(const std::string& path,
                                         const ManifestReaderOptions& options) {
  ManifestReader reader(path, options);
  std::vector<ManifestEntry> entries;
  ManifestEntry entry;
  while (reader.next(entry)) entries.push_back(std::move(entry));
  return entries;
}

}  // namespace winnow::curation::readers
