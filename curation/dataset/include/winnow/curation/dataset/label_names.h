// LabelNames: the dataset's label names and the integer labels the store
// keeps for them. A numeric label is its own id (label_text.h); every other
// text is a name with a negative id of its own, handed out in order of first
// sight (-1, -2, ...) and recorded in the store's meta (kMetaKey) as a JSON
// object of name -> id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace winnow::store {
class MetadataStore;
}

namespace winnow::curation {

class LabelNames {
 public:
  static constexpr const char* kMetaKey = "curation.label_names";

  // The names recorded in `store` (none yet: empty). Throws winnow::Error
  // when the meta is not a JSON object of integer ids.
  static LabelNames read(store::MetadataStore& store);
  // Records the names in `store`'s meta.
  void write(store::MetadataStore& store) const;

  // The stored label of `text`, giving a new name the next id.
  std::int64_t add(const std::string& text);
  // The stored label of `text`, or nothing for a name never recorded.
  std::optional<std::int64_t> find(const std::string& text) const;
  // The text of a stored label: its name, else the number.
  std::string name_of(std::int64_t label) const;
  bool is_named(std::int64_t label) const { return names_.count(label) > 0; }

  std::size_t size() const { return ids_.size(); }  // names recorded

 private:
  std::map<std::string, std::int64_t> ids_;              // name -> id
  std::unordered_map<std::int64_t, std::string> names_;  // id -> name
};

}  // namespace winnow::curation
