#include "winnow/spec_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <fmt/ranges.h>

#include "spec_tokens.h"
#include "winnow/error.h"

namespace winnow {

SpecReader::SpecReader(Spec spec, std::string what, std::string text)
    : spec_(std::move(spec)), what_(std::move(what)), text_(std::move(text)) {
  if (text_.empty()) text_ = spec_.to_string();
}

const std::string* SpecReader::find(const std::string& key) {
  if (std::find(read_.begin(), read_.end(), key) == read_.end()) read_.push_back(key);
  const auto it = spec_.params.find(key);
  return it == spec_.params.end() ? nullptr : &it->second;
}

double SpecReader::parse_number(const std::string& key, const std::string& value,
                                const std::string& piece) const {
  const std::string t = spec_tokens::trim(piece);
  char* end = nullptr;
  const double number = std::strtod(t.c_str(), &end);
  if (!t.empty() && end == t.c_str() + t.size() && std::isfinite(number)) return number;
  if (piece == value) {
    WINNOW_THROW("{} '{}': value '{}' of '{}' is not a finite number", what_, text_, value, key);
  }
  WINNOW_THROW(
      "{} '{}': value '{}' of '{}' is not a finite number: '{}' (numbers are "
      "separated by ':')",
      what_, text_, value, key, piece);
}

std::uint64_t SpecReader::parse_digits(const std::string& key, const std::string& value,
                                       std::uint64_t min, std::uint64_t max,
                                       const char* type) const {
  // Digits only: no sign, no spaces, no exponent, so "1e3" or "-1" never
  // turn into a surprising size.
  bool ok = !value.empty();
  std::uint64_t number = 0;
  for (const char c : value) {
    if (!ok) break;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    ok = c >= '0' && c <= '9' && number <= (max - digit) / 10;
    if (ok) number = number * 10 + digit;
  }
  WINNOW_THROW_IF_NOT(ok && number >= min, "{} '{}': value '{}' of '{}' is not a {} (at most {})",
                      what_, text_, value, key, type, max);
  return number;
}

double SpecReader::number(const std::string& key, double fallback) {
  const std::string* value = find(key);
  return value == nullptr ? fallback : parse_number(key, *value, *value);
}

std::vector<double> SpecReader::numbers(const std::string& key,
                                        const std::vector<double>& fallback) {
  const std::string* value = find(key);
  if (value == nullptr) return fallback;
  std::vector<double> numbers;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = value->find(':', start);
    const std::size_t end = colon == std::string::npos ? value->size() : colon;
    numbers.push_back(parse_number(key, *value, value->substr(start, end - start)));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return numbers;
}

std::uint64_t SpecReader::integer(const std::string& key, std::uint64_t fallback,
                                  std::uint64_t max) {
  const std::string* value = find(key);
  return value == nullptr ? fallback : parse_digits(key, *value, 0, max, "non-negative integer");
}

int SpecReader::positive_int(const std::string& key, int fallback, int max) {
  const std::string* value = find(key);
  if (value == nullptr) return fallback;
  const auto bound = static_cast<std::uint64_t>(std::max(max, 1));
  return static_cast<int>(parse_digits(key, *value, 1, bound, "positive integer"));
}

std::string SpecReader::string(const std::string& key, const std::string& fallback) {
  const std::string* value = find(key);
  return value == nullptr ? fallback : *value;
}

void SpecReader::finish() const {
  for (const auto& [key, value] : spec_.params) {
    if (std::find(read_.begin(), read_.end(), key) != read_.end()) continue;
    if (read_.empty()) {
      WINNOW_THROW("{} '{}': unknown key '{}' ('{}' takes no parameters)", what_, text_, key,
                   spec_.name);
    }
    WINNOW_THROW("{} '{}': unknown key '{}' for '{}' (expected {})", what_, text_, key, spec_.name,
                 fmt::join(read_, ", "));
  }
}

}  // namespace winnow
