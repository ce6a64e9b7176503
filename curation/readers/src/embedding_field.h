// The fast path for a manifest line's "embedding" field (manifest_reader.cpp).
//
// A record with a provided embedding spends most of its parse on the
// embedding's numbers: nlohmann's lexer, then strtod, for each of 128 or more.
// In a line of the common shape (a top-level "embedding" key, once, whose
// value is an array of plain JSON numbers) that array is read here with
// std::from_chars, which gives the same doubles as strtod (both are correctly
// rounded) and so the same floats, and is replaced by 0 in the text left to
// the general parser. Anything else is left whole to the general parser,
// whose refusals name the problem: no such key (or a top-level key written
// with escapes, which could spell it), the key twice, an empty array or one
// holding anything but numbers, an integer beyond int64 (nlohmann keeps those
// as unsigned), a number beyond a float's range.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::curation::readers {

struct SplitEmbedding {
  std::string rest;           // the line with the embedding's array replaced by 0
  std::vector<float> values;  // the array, as read_embedding would convert it
};

std::optional<SplitEmbedding> split_embedding_field(std::string_view line);

}  // namespace winnow::curation::readers
