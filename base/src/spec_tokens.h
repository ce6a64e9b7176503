// Token helpers shared by Spec::parse and SpecReader (internal to winnow::base).
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace winnow::spec_tokens {

// `s` without leading and trailing whitespace.
inline std::string trim(const std::string& s) {
  std::size_t begin = 0;
  std::size_t end = s.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  return s.substr(begin, end - begin);
}

// A name or key: one or more of [A-Za-z0-9_-].
inline bool is_token(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

}  // namespace winnow::spec_tokens
