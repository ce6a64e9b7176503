#include "winnow/spec.h"

#include "spec_tokens.h"
#include "winnow/error.h"

namespace winnow {

using spec_tokens::is_token;
using spec_tokens::trim;

Spec Spec::parse(const std::string& text, const std::string& what) {
  Spec spec;
  const std::string t = trim(text);
  const std::size_t open = t.find('(');
  std::string body;
  if (open == std::string::npos) {
    WINNOW_THROW_IF_NOT(t.find(')') == std::string::npos,
                        "{} '{}': unbalanced parentheses: ')' without '('", what, text);
    spec.name = t;
  } else {
    WINNOW_THROW_IF_NOT(t.back() == ')', "{} '{}': unbalanced parentheses: expected ')' at the end",
                        what, text);
    spec.name = trim(t.substr(0, open));
    body = t.substr(open + 1, t.size() - open - 2);
  }
  WINNOW_THROW_IF_NOT(is_token(spec.name),
                      "{} '{}': expected a name of letters, digits, '-' or '_', optionally "
                      "followed by (key=value,...), got name '{}'",
                      what, text, spec.name);
  if (trim(body).empty()) return spec;  // "name" or "name()"

  // Values may hold anything but ',' (a path may hold '(' or '='), so items
  // split at every ',' and each item at its first '='.
  std::size_t start = 0;
  while (true) {
    std::size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    const std::string item = trim(body.substr(start, comma - start));
    const std::size_t eq = item.find('=');
    WINNOW_THROW_IF_NOT(eq != std::string::npos, "{} '{}': '{}' is not key=value", what, text,
                        item);
    const std::string key = trim(item.substr(0, eq));
    const std::string value = trim(item.substr(eq + 1));
    WINNOW_THROW_IF_NOT(is_token(key),
                        "{} '{}': key '{}' (in '{}') must be letters, digits, '-' or '_'", what,
                        text, key, item);
    WINNOW_THROW_IF_NOT(!value.empty(), "{} '{}': key '{}' has no value", what, text, key);
    WINNOW_THROW_IF_NOT(spec.params.emplace(key, value).second, "{} '{}': key '{}' given twice",
                        what, text, key);
    if (comma == body.size()) break;
    start = comma + 1;
    // One trailing ',' is allowed: embedder specs always took it, and datasets
    // store the embedder spec as the user wrote it.
    if (trim(body.substr(start)).empty()) break;
  }
  return spec;
}

std::string Spec::to_string() const {
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

}  // namespace winnow
