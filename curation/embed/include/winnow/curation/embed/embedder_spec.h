// EmbedderSpec: an embedder spec "name(key=value,...)" split into its name and
// parameters, for make_embedder and for embedder families registered from
// outside curation (register_embedder). The grammar is winnow's one spec
// grammar (winnow/spec.h, docs/specs.md): whitespace around tokens is ignored.
// Each parameter is taken as a size or a string; check_no_extra() then names
// any key no embedder asked for.
#pragma once

#include <cstddef>
#include <string>

#include "winnow/spec_reader.h"

namespace winnow::curation::embed {

class EmbedderSpec {
 public:
  // Throws winnow::Error naming `spec` when it does not follow the grammar
  // (empty, no closing ')', an item that is not key=value, a key given twice).
  explicit EmbedderSpec(const std::string& spec);

  const std::string& name() const { return reader_.spec().name; }
  const std::string& text() const { return spec_; }

  // The value of `key`, or `fallback` when absent. take_size throws naming the
  // key when the value is not a non-negative integer of at most 999999999.
  std::size_t take_size(const std::string& key, std::size_t fallback);
  std::string take_string(const std::string& key, const std::string& fallback);

  // Throws naming the first key left over (unknown to this embedder).
  void check_no_extra() const;

 private:
  std::string spec_;
  SpecReader reader_;
};

}  // namespace winnow::curation::embed
