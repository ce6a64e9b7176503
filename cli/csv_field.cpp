#include "csv_field.h"

#include <string_view>

#include "winnow/curation/core/printable_text.h"

namespace winnow::cli {

namespace {

// A plain decimal number ("-1", "+2.5", "1e-3"): a spreadsheet reads it as a
// number, never as a formula, so it is kept as is.
bool is_plain_number(const std::string& s) {
  std::size_t i = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  std::size_t n = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits();
  }
  if (n == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

}  // namespace

std::string csv_field(const std::string& s) {
  std::string cell = curation::visible_text(s);  // a tab or CR is \x09 or \x0d now
  if (!cell.empty() && std::string_view("=+-@").find(cell[0]) != std::string_view::npos &&
      !is_plain_number(cell)) {
    cell.insert(0, 1, '\'');
  }
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace winnow::cli
