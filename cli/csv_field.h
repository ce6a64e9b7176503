// One CSV cell of text from the data, safe to open in a spreadsheet: what
// `winnow export --format csv` and `winnow annotate-next` write.
#pragma once

#include <string>

namespace winnow::cli {

// Control and invisible characters written escaped (visible_text); a cell
// starting with = + - @ that is not a plain number gets a leading ' (CSV
// injection, OWASP); then RFC 4180 quoting.
std::string csv_field(const std::string& s);

}  // namespace winnow::cli
