#include "winnow/pruning/policy_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "winnow/error.h"

namespace winnow {
namespace {

std::string trim(const std::string& s) {
  std::size_t begin = 0;
  std::size_t end = s.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  return s.substr(begin, end - begin);
}

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

double parse_number(const std::string& text, const std::string& key, const std::string& spec) {
  const std::string t = trim(text);
  char* end = nullptr;
  const double value = std::strtod(t.c_str(), &end);
  WINNOW_THROW_IF_NOT(!t.empty() && end == t.c_str() + t.size() && std::isfinite(value),
                      "policy '{}': parameter '{}' must be a finite number, got '{}'", spec,
                      key, text);
  return value;
}

}  // namespace

PolicySpec PolicySpec::parse(const std::string& text) {
  PolicySpec spec;
  const std::string t = trim(text);
  const std::size_t open = t.find('(');
  if (open == std::string::npos) {
    spec.name = t;
  } else {
    WINNOW_THROW_IF_NOT(t.back() == ')', "cannot parse policy '{}': missing ')' at the end",
                        text);
    spec.name = trim(t.substr(0, open));
    const std::string body = t.substr(open + 1, t.size() - open - 2);
    std::size_t start = 0;
    while (start <= body.size() && !trim(body).empty()) {
      std::size_t comma = body.find(',', start);
      if (comma == std::string::npos) comma = body.size();
      const std::string item = trim(body.substr(start, comma - start));
      const std::size_t eq = item.find('=');
      WINNOW_THROW_IF_NOT(eq != std::string::npos,
                          "cannot parse policy '{}': parameter '{}' is not key=value", text,
                          item);
      const std::string key = trim(item.substr(0, eq));
      const std::string value = trim(item.substr(eq + 1));
      WINNOW_THROW_IF_NOT(valid_name(key) && !value.empty(),
                          "cannot parse policy '{}': bad parameter '{}'", text, item);
      WINNOW_THROW_IF_NOT(spec.params.emplace(key, value).second,
                          "cannot parse policy '{}': parameter '{}' given twice", text, key);
      start = comma + 1;
      if (comma == body.size()) break;
    }
  }
  WINNOW_THROW_IF_NOT(valid_name(spec.name),
                      "cannot parse policy '{}': expected a name such as 'infobatch' or "
                      "'infobatch(r=0.5)'",
                      text);
  return spec;
}

std::string PolicySpec::to_string() const {
  if (params.empty()) return name;
  std::string out = name + "(";
  bool first = true;
  for (const auto& [key, value] : params) {
    if (!first) out += ",";
    out += key + "=" + value;
    first = false;
  }
  return out + ")";
}

std::string format_number(double value) { return fmt::format("{}", value); }

double ParamReader::number(const std::string& key, double fallback) {
  read_.push_back(key);
  const auto it = spec_.params.find(key);
  if (it == spec_.params.end()) return fallback;
  return parse_number(it->second, key, spec_.to_string());
}

std::vector<double> ParamReader::numbers(const std::string& key,
                                         const std::vector<double>& fallback) {
  read_.push_back(key);
  const auto it = spec_.params.find(key);
  if (it == spec_.params.end()) return fallback;
  std::vector<double> values;
  std::size_t start = 0;
  const std::string& text = it->second;
  while (true) {
    const std::size_t colon = text.find(':', start);
    const std::size_t end = colon == std::string::npos ? text.size() : colon;
    values.push_back(parse_number(text.substr(start, end - start), key, spec_.to_string()));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return values;
}

void ParamReader::finish() const {
  for (const auto& [key, value] : spec_.params) {
    WINNOW_THROW_IF_NOT(std::find(read_.begin(), read_.end(), key) != read_.end(),
                        "policy '{}' has no parameter '{}'", spec_.to_string(), key);
  }
}

}  // namespace winnow
