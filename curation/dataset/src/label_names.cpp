#include "winnow/curation/dataset/label_names.h"

#include <nlohmann/json.hpp>

#include "winnow/curation/labels/label_text.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation {

LabelNames LabelNames::read(store::MetadataStore& store) {
  LabelNames names;
  const std::optional<std::string> text = store.get_meta(kMetaKey);
  if (!text) return names;
  const nlohmann::json object = nlohmann::json::parse(*text, nullptr, false);
  WINNOW_THROW_IF_NOT(object.is_object(), "{}: meta '{}' is not a JSON object: {}",
                      store.database().path(), kMetaKey, *text);
  for (const auto& [name, id] : object.items()) {
    WINNOW_THROW_IF_NOT(id.is_number_integer(), "{}: meta '{}': label '{}' has no integer id",
                        store.database().path(), kMetaKey, name);
    names.ids_[name] = id.get<std::int64_t>();
    names.names_.emplace(id.get<std::int64_t>(), name);
  }
  return names;
}

void LabelNames::write(store::MetadataStore& store) const {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, id] : ids_) object[name] = id;
  store.set_meta(kMetaKey, object.dump());
}

std::int64_t LabelNames::add(const std::string& text) {
  if (const std::optional<std::int64_t> id = find(text)) return *id;
  const std::int64_t id = -static_cast<std::int64_t>(ids_.size()) - 1;
  ids_[text] = id;
  names_.emplace(id, text);
  return id;
}

std::optional<std::int64_t> LabelNames::find(const std::string& text) const {
  if (const std::optional<std::int64_t> id = labels::numeric_label(text)) return id;
  const auto named = ids_.find(text);
  if (named == ids_.end()) return std::nullopt;
  return named->second;
}

std::string LabelNames::name_of(std::int64_t label) const {
  const auto named = names_.find(label);
  return named != names_.end() ? named->second : std::to_string(label);
}

}  // namespace winnow::curation
