// read_label_studio_json: Label Studio's JSON export of a choices project
// (annotation_table.h; the mapping: docs/annotations.md).
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/readers/annotations/annotation_table.h"
#include "winnow/error.h"

namespace winnow::curation::readers {

namespace {

using nlohmann::json;

// The 1-based line of byte `offset` of `text`.
std::size_t line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// Field `key` of object `o` when it is a string, else "" (json::value would
// throw for another type).
std::string text_field(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Field `key` of object `o` is the boolean true.
bool is_true(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

// A task id or an annotator's user id: a string, or an integer as decimal.
std::optional<std::string> id_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return std::nullopt;
}

// `completed_by`: a user id, or (in some exports) the user object, named by
// its e-mail address when it has one.
std::optional<std::string> annotator_of(const json& annotation) {
  const auto by = annotation.find("completed_by");
  if (by == annotation.end()) return std::nullopt;
  if (by->is_object()) {
    const std::string email = text_field(*by, "email");
    if (!email.empty()) return email;
    const auto id = by->find("id");
    return id == by->end() ? std::nullopt : id_text(*id);
  }
  return id_text(*by);
}

// What one annotation's result says: its choice, none, or why it cannot be read.
struct Choice {
  std::optional<std::string> label;
  std::string problem;
};

Choice choice_of(const json& annotation, const std::string& control) {
  const auto result = annotation.find("result");
  if (result == annotation.end() || result->is_null()) return {};
  if (!result->is_array()) return {std::nullopt, "'result' is not a list"};
  std::set<std::string> controls;
  Choice choice;
  for (const json& r : *result) {
    if (!r.is_object() || text_field(r, "type") != "choices") continue;
    const std::string from = text_field(r, "from_name");
    if (!control.empty() && from != control) continue;
    controls.insert(from);
    const json* value = r.contains("value") ? &r.at("value") : nullptr;
    const json* choices = value != nullptr && value->is_object() && value->contains("choices")
                              ? &value->at("choices")
                              : nullptr;
    if (choices == nullptr || !choices->is_array() ||
        !std::all_of(choices->begin(), choices->end(), [](const json& c) { return c.is_string(); }))
      return {std::nullopt, "a choices result has no 'value.choices' list of strings"};
    if (choices->size() > 1)
      return {std::nullopt,
              fmt::format("{} choices in one result: multi-label choices are not supported",
                          choices->size())};
    if (choices->size() == 1) choice.label = choices->front().get<std::string>();
  }
  if (controls.size() > 1)
    return {std::nullopt, fmt::format("choices of several controls ({}): name the one to read "
                                      "with --choice-control",
                                      fmt::join(controls, ", "))};
  if (choice.label && choice.label->empty()) return {std::nullopt, "an empty choice"};
  return choice;
}

void read_task(const json& task, std::size_t number, const std::string& control,
               AnnotationTable& table) {
  if (!task.is_object()) {
    table.refuse(number, "", fmt::format("not a task object but {}", task.type_name()));
    return;
  }
  // A task winnow made (`winnow annotate-next --format label-studio`) names
  // its sample in data.item; Label Studio gives it an id of its own.
  const auto id = task.find("id");
  std::optional<std::string> key = id == task.end() ? std::nullopt : id_text(*id);
  if (const auto data = task.find("data"); data != task.end() && data->is_object()) {
    const auto item = data->find("item");
    if (item != data->end() && item->is_string() && !item->get<std::string>().empty()) {
      key = item->get<std::string>();
    }
  }
  if (!key || key->empty()) {
    table.refuse(number, "", "no 'id' (a string or an integer)");
    return;
  }
  table.item(number, *key);
  const auto annotations = task.find("annotations");
  if (annotations == task.end() || annotations->is_null()) return;
  if (!annotations->is_array()) {
    table.refuse(number, *key, "'annotations' is not a list");
    return;
  }
  for (std::size_t a = 0; a < annotations->size(); ++a) {
    const json& annotation = (*annotations)[a];
    if (!annotation.is_object()) {
      table.refuse(number, *key, fmt::format("annotations[{}] is not an object", a));
      return;
    }
    if (is_true(annotation, "was_cancelled")) {
      ++table.cancelled;
      continue;
    }
    const std::optional<std::string> annotator = annotator_of(annotation);
    if (!annotator || annotator->empty()) {
      table.refuse(number, *key, fmt::format("annotations[{}] has no 'completed_by'", a));
      return;
    }
    const Choice choice = choice_of(annotation, control);
    if (!choice.problem.empty()) {
      table.refuse(number, *key, fmt::format("annotations[{}]: {}", a, choice.problem));
      return;
    }
    if (!choice.label) {
      ++table.without_choice;
      continue;
    }
    // A reviewer's ground_truth annotation is the item's gold label too.
    const bool ground_truth = is_true(annotation, "ground_truth");
    table.add(number, *key, {*annotator, *choice.label}, ground_truth ? *choice.label : "", "");
  }
}

}  // namespace

AnnotationTable read_label_studio_json(std::string_view text, const std::string& name,
                                       const std::string& control) {
  // Each task is read as soon as the parser has it and then dropped, so
  // memory follows the largest task, not the file (7M empty tasks would
  // otherwise be 7M JSON objects).
  AnnotationTable table;
  table.unit = "task";
  bool list = false;
  std::size_t tasks = 0;
  const json::parser_callback_t each_task = [&](int depth, json::parse_event_t event,
                                                json& parsed) {
    if (depth == 0 && event == json::parse_event_t::array_start) list = true;
    const bool task_done = event == json::parse_event_t::object_end ||
                           event == json::parse_event_t::array_end ||
                           event == json::parse_event_t::value;
    if (!list || depth != 1 || !task_done) return true;
    read_task(parsed, ++tasks, control, table);
    return false;  // not kept in the list
  };
  json top;
  try {
    top = json::parse(text.begin(), text.end(), each_task);
  } catch (const json::parse_error& e) {
    WINNOW_THROW("{}: line {}: not valid JSON: {}", name, line_of(text, e.byte), e.what());
  } catch (const json::exception& e) {  // a number out of range (1e999), ...
    WINNOW_THROW("{}: not valid JSON: {}", name, e.what());
  }
  WINNOW_THROW_IF_NOT(top.is_array(),
                      "{}: expected a JSON list of tasks (Label Studio's JSON export), got {}",
                      name, top.type_name());
  return table;
}

}  // namespace winnow::curation::readers
