#include "embedding_field.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <system_error>

namespace winnow::curation::readers {

namespace {

constexpr std::size_t kNone = std::string_view::npos;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

std::size_t skip_digits(std::string_view s, std::size_t i) {
  while (i < s.size() && is_digit(s[i])) ++i;
  return i;
}

// The end of the JSON number at s[i], or kNone where the text is not exactly
// the grammar's -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (from_chars
// alone would also take "inf", "01" or "1.").
std::size_t number_end(std::string_view s, std::size_t i, bool& integer) {
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !is_digit(s[i])) return kNone;
  i = s[i] == '0' ? i + 1 : skip_digits(s, i);
  integer = true;
  if (i < s.size() && s[i] == '.') {
    const std::size_t digits = i + 1;
    i = skip_digits(s, digits);
    if (i == digits) return kNone;
    integer = false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const std::size_t digits = i;
    i = skip_digits(s, digits);
    if (i == digits) return kNone;
    integer = false;
  }
  return i;
}

// As nlohmann reads the number and read_embedding converts it: an integer to
// int64 and then double (so "-0" is +0.0), any other to the nearest double;
// then to float, refused beyond a float's range.
bool read_value(std::string_view token, bool integer, float& out) {
  const char* first = token.data();
  const char* last = first + token.size();
  double d = 0.0;
  if (integer) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last) return false;
    d = static_cast<double>(v);
  } else {
    const auto [end, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || end != last) return false;
  }
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) return false;
  out = static_cast<float>(d);
  return true;
}

// The array of numbers at s[i] ('['): the index after its ']', or kNone.
std::size_t read_numbers(std::string_view s, std::size_t i, std::vector<float>& values) {
  i = skip_space(s, i + 1);
  for (;;) {
    bool integer = false;
    const std::size_t end = number_end(s, i, integer);
    float value = 0.0f;
    if (end == kNone || !read_value(s.substr(i, end - i), integer, value)) return kNone;
    values.push_back(value);
    i = skip_space(s, end);
    if (i >= s.size()) return kNone;
    if (s[i] == ']') return i + 1;
    if (s[i] != ',') return kNone;
    i = skip_space(s, i + 1);
  }
}

// The end of the string whose opening quote is at s[i] (the index after its
// closing quote), or kNone; `escaped` tells whether it holds a backslash.
std::size_t string_end(std::string_view s, std::size_t i, bool& escaped) {
  escaped = false;
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      escaped = true;
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return kNone;
}

}  // namespace

std::optional<SplitEmbedding> split_embedding_field(std::string_view line) {
  std::size_t i = skip_space(line, 0);
  if (i >= line.size() || line[i] != '{') return std::nullopt;
  std::size_t depth = 0;
  std::size_t array_begin = kNone;
  std::size_t array_end = kNone;
  SplitEmbedding split;
  while (i < line.size()) {
    const char c = line[i];
    if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return std::nullopt;
      --depth;
      ++i;
    } else if (c == '"') {
      bool escaped = false;
      const std::size_t end = string_end(line, i, escaped);
      if (end == kNone) return std::nullopt;
      const std::size_t after = skip_space(line, end);
      const bool top_level_key = depth == 1 && after < line.size() && line[after] == ':';
      if (!top_level_key || line.substr(i + 1, end - i - 2) != "embedding") {
        if (top_level_key && escaped) return std::nullopt;  // it might spell "embedding"
        i = end;
        continue;
      }
      if (array_begin != kNone) return std::nullopt;  // the key twice
      array_begin = skip_space(line, after + 1);
      if (array_begin >= line.size() || line[array_begin] != '[') return std::nullopt;
      array_end = read_numbers(line, array_begin, split.values);
      if (array_end == kNone) return std::nullopt;
      i = array_end;
    } else {
      ++i;
    }
  }
  if (array_begin == kNone) return std::nullopt;
  split.rest.reserve(line.size() - (array_end - array_begin) + 1);
  split.rest.append(line.substr(0, array_begin));
  split.rest.push_back('0');
  split.rest.append(line.substr(array_end));
  return split;
}

}  // namespace winnow::curation::readers
