// json_text: the text of a JSON value for output. File names and other bytes
// from outside may be invalid UTF-8; such bytes are replaced (U+FFFD) rather
// than thrown on, so one odd name never fails a status page or a CLI answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace winnow::curation {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace winnow::curation
