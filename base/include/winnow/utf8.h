// Internal: codepoint boundaries of UTF-8 text (invalid bytes count as one
// codepoint each, so any byte string is accepted).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace winnow {

// Byte offsets of every codepoint start, plus text.size() at the end.
inline std::vector<std::size_t> codepoint_offsets(std::string_view text) {
  std::vector<std::size_t> offsets;
  offsets.reserve(text.size() + 1);
  std::size_t i = 0;
  while (i < text.size()) {
    offsets.push_back(i);
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    if (c >= 0xF0 && c < 0xF8) {
      len = 4;
    } else if (c >= 0xE0) {
      len = c < 0xF0 ? 3 : 1;
    } else if (c >= 0xC0) {
      len = 2;
    }
    std::size_t j = 1;
    while (j < len && i + j < text.size() &&
           (static_cast<unsigned char>(text[i + j]) & 0xC0) == 0x80) {
      ++j;
    }
    i += j;
  }
  offsets.push_back(text.size());
  return offsets;
}

}  // namespace winnow
