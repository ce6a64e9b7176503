// Byte strings from outside (file names, manifest excerpts) made safe to store
// in SQLite and print in JSON, which must be valid UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace winnow::curation {

// `text` with control bytes and invalid UTF-8 written as \xNN (valid UTF-8
// is kept as is); at most max_bytes of output, then "...".
std::string printable_text(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// `text` as a key (a file's name, a CSV item or annotator): printable_text,
// and a backslash written \\ too, so that two different byte strings never
// share a key ("caf\xe9" as typed and "caf" + byte 0xE9 differ). Whole,
// never cut short.
std::string printable_key(std::string_view text);

// `text` as a person should see it in an output meant for reading (CSV,
// HTML, Markdown, a terminal): printable_text, and besides the C1 controls,
// the bidirectional overrides and isolates and the zero-width characters
// written as \u{XXXX}, so that no string can hide, reorder or imitate
// another (two annotators named "ann" and "ann<U+200B>" look different).
std::string visible_text(std::string_view text);

}  // namespace winnow::curation
