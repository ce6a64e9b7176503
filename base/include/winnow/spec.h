// Spec: the one grammar for things named by a string with parameters, shared by
// pruning policies ("infobatch(r=0.5)"), embedders ("pixels(dim=64)") and index
// configs ("hnsw(M=16)"). The dialect, its value types and its errors are
// documented once, in docs/specs.md:
//
//   spec  := name | name "(" [ key "=" value { "," key "=" value } [ "," ] ] ")"
//   name, key := one or more of [A-Za-z0-9_-]
//   value := any text without ',' (trimmed; inner spaces are kept)
//
// Whitespace around every token is ignored. Values stay text here; SpecReader
// reads them as numbers, integers or strings.
#pragma once

#include <map>
#include <string>

namespace winnow {

struct Spec {
  std::string name;
  std::map<std::string, std::string> params;  // sorted, so to_string is canonical

  // Parses `text`; `what` names the thing parsed in errors ("policy",
  // "embedder spec", "index config"). Throws winnow::Error (invalid_input)
  // quoting `what` and the whole text, plus the offending key or item.
  static Spec parse(const std::string& text, const std::string& what);

  // The canonical form: "name", or "name(key=value,...)" with keys sorted.
  std::string to_string() const;
};

}  // namespace winnow
