// How a label's text becomes the integer the store keeps.
//
// A label written as a non-negative decimal integer that fits an int ("7",
// "007") is that class id. Any other text is a name and gets a negative id of
// its own (IngestPipeline keeps the names in meta): "cat", but also "-1" and
// "4294967297", which would otherwise collide with the names' ids or wrap
// around. So numeric and named labels never share an id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace winnow::curation::labels {

// The value of a non-negative decimal integer without sign ("7", "007") that
// fits an int64, or nothing for any other text.
std::optional<std::int64_t> parse_decimal(std::string_view text);

// The class id of a numeric label, or nothing when `text` is a name.
std::optional<std::int64_t> numeric_label(std::string_view text);

// The label as the store names it: numeric labels in canonical form ("007"
// is "7"), names as they are.
std::string canonical_label(const std::string& text);

}  // namespace winnow::curation::labels
