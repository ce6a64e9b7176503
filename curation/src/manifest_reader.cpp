#include "winnow/curation/manifest_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "winnow/curation/content_hash.h"
#include "winnow/curation/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation {

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
  entry.rejection = Rejection{line, std::move(key), std::move(reason)};
  return entry;
}

}  // namespace

ManifestEntry parse_manifest_line(std::string_view line, std::size_t line_number,
                                  const ManifestReaderOptions& options) {
  if (line.size() > options.max_line_bytes) {
    return reject(line_number, {},
                  fmt::format("line is {} bytes, longer than the limit of {} bytes", line.size(),
                              options.max_line_bytes));
  }
  if (nesting_depth(line) > kMaxNesting) {
    return reject(line_number, {}, fmt::format("JSON nested deeper than {} levels", kMaxNesting));
  }
  json doc;
  try {
    doc = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& e) {
    // nlohmann's message quotes the input near the error ("last read: ..."):
    // it can be long or hold invalid UTF-8, so only a cleaned excerpt is kept.
    std::string reason = "invalid JSON: " + printable_text(e.what(), 240);
    // e.byte is one past the offending character: say why NaN is refused.
    const std::string_view at = e.byte >= 1 && e.byte <= line.size() ? line.substr(e.byte - 1)
                                                                      : std::string_view();
    if (at.substr(0, 3) == "NaN" || at.substr(0, 8) == "Infinity") {
      reason += " (JSON has no NaN or Infinity)";
    }
    return reject(line_number, {}, reason);
  } catch (const json::exception& e) {  // e.g. out_of_range: a number overflowing a double
    return reject(line_number, {}, "invalid JSON: " + printable_text(e.what(), 240));
  }
  if (!doc.is_object()) {
    return reject(line_number, {}, fmt::format("record is a JSON {}, not an object", doc.type_name()));
  }
  const auto key_it = doc.find("key");
  if (key_it == doc.end()) {
    return reject(line_number, {}, "missing field 'key'");
  }
  if (!key_it->is_string()) {
    return reject(line_number, {},
                  fmt::format("field 'key' must be a string, got {}", key_it->type_name()));
  }
  ManifestRecord rec;
  rec.line = line_number;
  rec.key = key_it->get<std::string>();
  if (rec.key.empty()) {
    return reject(line_number, {}, "field 'key' is empty");
  }
  const std::string& key = rec.key;

  const bool has_path = doc.contains("path");
  const bool has_text = doc.contains("text");
  const bool has_pixels = doc.contains("pixels");
  const int content_fields = int{has_path} + int{has_text} + int{has_pixels};
  if (content_fields == 0) {
    return reject(line_number, key, "no content: one of 'path', 'text' or 'pixels' is required");
  }
  if (content_fields > 1) {
    return reject(line_number, key,
                  "several content fields: exactly one of 'path', 'text' or 'pixels' is allowed");
  }

  if (has_path) {
    const json& v = doc["path"];
    if (!v.is_string()) {
      return reject(line_number, key, fmt::format("field 'path' must be a string, got {}", v.type_name()));
    }
    rec.kind = ContentKind::path;
    rec.path = v.get<std::string>();
    if (rec.path.empty()) {
      return reject(line_number, key, "field 'path' is empty");
    }
    std::filesystem::path p(rec.path);
    if (p.is_relative() && !options.base_dir.empty()) {
      p = std::filesystem::path(options.base_dir) / p;
    }
    rec.resolved_path = p.string();
  } else if (has_text) {
    const json& v = doc["text"];
    if (!v.is_string()) {
      return reject(line_number, key, fmt::format("field 'text' must be a string, got {}", v.type_name()));
    }
    rec.kind = ContentKind::text;
    rec.text = v.get<std::string>();
    if (rec.text.empty()) {
      return reject(line_number, key, "field 'text' is empty");
    }
  } else {
    const json& v = doc["pixels"];
    if (!v.is_array()) {
      return reject(line_number, key,
                    fmt::format("field 'pixels' must be an array of integers 0-255, got {}", v.type_name()));
    }
    if (v.empty()) {
      return reject(line_number, key, "field 'pixels' is empty");
    }
    rec.kind = ContentKind::pixels;
    rec.pixels.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const json& p = v[i];
      if (!p.is_number_integer() || p.get<std::int64_t>() < 0 || p.get<std::int64_t>() > 255 ||
          (p.is_number_unsigned() && p.get<std::uint64_t>() > 255)) {
        return reject(line_number, key,
                      fmt::format("pixels[{}] must be an integer 0-255, got {}", i,
                                  describe_value(p)));
      }
      rec.pixels.push_back(static_cast<std::uint8_t>(p.get<std::int64_t>()));
    }
    for (const char* field : {"width", "height"}) {
      const auto it = doc.find(field);
      if (it == doc.end()) {
        continue;
      }
      if (!it->is_number_integer() || it->get<std::int64_t>() <= 0) {
        return reject(line_number, key, fmt::format("field '{}' must be a positive integer, got {}",
                                                     field, describe_value(*it)));
      }
      (field[0] == 'w' ? rec.width : rec.height) = it->get<std::size_t>();
    }
    if ((rec.width == 0) != (rec.height == 0)) {
      return reject(line_number, key, "fields 'width' and 'height' must be given together");
    }
    if (rec.width != 0 && (rec.width > rec.pixels.size() || rec.height > rec.pixels.size() ||
                           rec.width * rec.height != rec.pixels.size())) {
      return reject(line_number, key,
                    fmt::format("width {} x height {} does not match {} pixels", rec.width,
                                rec.height, rec.pixels.size()));
    }
  }

  if (const auto it = doc.find("label"); it != doc.end() && !it->is_null()) {
    std::string label;
    if (!read_label(*it, label)) {
      return reject(line_number, key,
                    fmt::format("field 'label' must be a string or an integer, got {}", it->type_name()));
    }
    rec.label = std::move(label);
  }
  if (const auto it = doc.find("source"); it != doc.end() && !it->is_null()) {
    if (!it->is_string()) {
      return reject(line_number, key, fmt::format("field 'source' must be a string, got {}", it->type_name()));
    }
    rec.source = it->get<std::string>();
  }
  if (const auto it = doc.find("annotations"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) {
      return reject(line_number, key,
                    fmt::format("field 'annotations' must be an array, got {}", it->type_name()));
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& a = (*it)[i];
      if (!a.is_object()) {
        return reject(line_number, key, fmt::format("annotations[{}] must be an object", i));
      }
      Annotation ann;
      const auto who = a.find("annotator");
      if (who == a.end() || !who->is_string() || who->get<std::string>().empty()) {
        return reject(line_number, key,
                      fmt::format("annotations[{}].annotator must be a non-empty string", i));
      }
      ann.annotator = who->get<std::string>();
      const auto lab = a.find("label");
      if (lab == a.end() || !read_label(*lab, ann.label)) {
        return reject(line_number, key,
                      fmt::format("annotations[{}].label must be a string or an integer", i));
      }
      rec.annotations.push_back(std::move(ann));
    }
  }
  if (const auto it = doc.find("embedding"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) {
      return reject(line_number, key,
                    fmt::format("field 'embedding' must be an array of numbers, got {}", it->type_name()));
    }
    if (it->empty()) {
      return reject(line_number, key, "field 'embedding' is empty");
    }
    if (options.expected_embedding_dim != 0 && it->size() != options.expected_embedding_dim) {
      return reject(line_number, key,
                    fmt::format("field 'embedding' has {} values, expected {}", it->size(),
                                options.expected_embedding_dim));
    }
    rec.embedding.reserve(it->size());
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& x = (*it)[i];
      if (!x.is_number()) {
        return reject(line_number, key,
                      fmt::format("embedding[{}] must be a number, got {}", i, x.type_name()));
      }
      const double d = x.get<double>();
      // Checked before the cast: a double beyond float's range does not
      // convert to a float.
      if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
        return reject(line_number, key,
                      fmt::format("embedding[{}] is not finite as a 32-bit float ({})", i,
                                  describe_value(x)));
      }
      rec.embedding.push_back(static_cast<float>(d));
    }
  }

  if (options.hash_content) {
    try {
      rec.content_hash = record_content_hash(rec, options.content);
    } catch (const Error& e) {
      if (rec.kind != ContentKind::path || options.content.roots.empty()) {
        return reject(line_number, key, e.what());
      }
      // Whoever writes the inbox must not learn what exists outside the roots.
      return reject(line_number, key,
                    fmt::format("path '{}' cannot be read: it must name a regular file of at most "
                                "{} bytes beneath a content root, reached without symbolic links "
                                "leading out",
                                printable_text(rec.path, 240), options.content.max_bytes));
    }
  }
  ManifestEntry entry;
  entry.record = std::move(rec);
  return entry;
}

ManifestReader::ManifestReader(const std::string& path, ManifestReaderOptions options)
    : owned_buf_(std::make_unique<RegularFileStreamBuf>(RegularFile(path, {}, "manifest"))),
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
    WINNOW_THROW_IF_NOT(c != 0 || bytes_read_ > kBinarySniffBytes,
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

bool ManifestReader::next(ManifestEntry& entry) {
  for (;;) {
    if (!read_line()) {
      return false;
    }
    ++line_;
    if (too_long_) {
      entry = ManifestEntry{};
      entry.rejection =
          Rejection{line_, {},
                    fmt::format("line is {} bytes, longer than the limit of {} bytes",
                                line_length_, options_.max_line_bytes)};
      return true;
    }
    if (!line_buf_.empty() && line_buf_.back() == '\r') {
      line_buf_.pop_back();
    }
    if (is_blank(line_buf_)) {
      continue;
    }
    entry = parse_manifest_line(line_buf_, line_, options_);
    return true;
  }
}

}  // namespace winnow::curation
