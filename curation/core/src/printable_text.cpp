#include "winnow/curation/core/printable_text.h"

#include <cstdint>

#include <fmt/format.h>

namespace winnow::curation {

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not valid UTF-8 (stray continuation, overlong form, surrogate,
// beyond U+10FFFF or cut short).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  std::size_t len = 0;
  unsigned char lo = 0x80;  // allowed range of the second byte
  unsigned char hi = 0xBF;
  if (c < 0x80) {
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
    hi = c == 0xED ? 0x9F : 0xBF;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + len > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) {
    return 0;
  }
  for (std::size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  return len;
}

// Code points that change how text around them is shown without showing
// themselves: C1 controls, bidirectional marks, overrides and isolates,
// zero-width characters, line and paragraph separators, the BOM.
bool invisible(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x2069) || c == 0xFEFF;
}

// The code point of the valid UTF-8 sequence of `len` bytes at `s`.
char32_t code_point(const char* s, std::size_t len) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (len == 1) return b(0);
  if (len == 2) return (char32_t{b(0)} & 0x1F) << 6 | (b(1) & 0x3F);
  if (len == 3) return (char32_t{b(0)} & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (char32_t{b(0)} & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// The one escaping loop: control bytes and invalid UTF-8 as \xNN, and with
// show_invisible the invisible code points as \u{XXXX}; at most max_bytes of
// output, then "...".
std::string escaped(std::string_view text, std::size_t max_bytes, bool show_invisible) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const std::size_t len = utf8_sequence_length(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (len == 0 || c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    const char32_t point = show_invisible ? code_point(text.data() + i, len) : 0;
    if (show_invisible && invisible(point)) {
      out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(point));
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace

std::string printable_key(std::string_view text) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t at = text.find('\\'); at != std::string_view::npos;
       start = at + 1, at = text.find('\\', start)) {
    out += printable_text(text.substr(start, at - start));
    out += "\\\\";
  }
  out += printable_text(text.substr(start));
  return out;
}

std::string visible_text(std::string_view text) {
  return escaped(text, std::string_view::npos, true);
}

std::string printable_text(std::string_view text, std::size_t max_bytes) {
  return escaped(text, max_bytes, false);
}

}  // namespace winnow::curation
