// Text from the data written into an HTML page: the report's and the
// gallery's one escaping, for element text and quoted attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace winnow::curation {

// `text` with & < > " ' as character references.
std::string html_escape(std::string_view text);

}  // namespace winnow::curation
