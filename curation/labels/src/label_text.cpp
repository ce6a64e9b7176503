#include "winnow/curation/labels/label_text.h"

#include <charconv>
#include <limits>

namespace winnow::curation::labels {

std::optional<std::int64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;  // no sign
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> numeric_label(std::string_view text) {
  const std::optional<std::int64_t> value = parse_decimal(text);
  if (!value || *value > std::numeric_limits<int>::max()) return std::nullopt;
  return value;
}

std::string canonical_label(const std::string& text) {
  const std::optional<std::int64_t> id = numeric_label(text);
  return id ? std::to_string(*id) : text;
}

}  // namespace winnow::curation::labels
