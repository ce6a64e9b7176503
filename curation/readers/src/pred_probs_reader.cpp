#include "winnow/curation/readers/pred_probs_reader.h"

#include <cmath>
#include <fstream>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "winnow/error.h"

namespace winnow::curation::readers {

PredProbsFile read_pred_probs(const std::string& path, double sum_tolerance) {
  using nlohmann::json;
  std::ifstream in(path);
  WINNOW_THROW_IF_NOT(in.good(), "pred-probs file '{}' cannot be read", path);
  PredProbsFile file;
  std::optional<std::size_t> num_classes;
  std::string text;
  std::size_t line = 0;
  bool first = true;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json j = json::parse(text, nullptr, false);
    WINNOW_THROW_IF_NOT(!j.is_discarded(),
                        "{} line {}: not valid JSON (NaN, Infinity and out-of-range numbers are "
                        "not finite probabilities)",
                        path, line);
    WINNOW_THROW_IF_NOT(j.is_object(), "{} line {}: not a JSON object", path, line);
    if (first && j.contains("classes")) {
      first = false;
      const json& names = j["classes"];
      WINNOW_THROW_IF_NOT(names.is_array() && names.size() >= 2,
                          "{} line {}: \"classes\" must be an array of at least 2 names", path,
                          line);
      for (const json& n : names) {
        WINNOW_THROW_IF_NOT(n.is_string(), "{} line {}: class name {} is not a string", path, line,
                            n.dump());
        file.table.class_names.push_back(n.get<std::string>());
      }
      num_classes = file.table.class_names.size();
      continue;
    }
    first = false;
    WINNOW_THROW_IF_NOT(
        j.contains("key") && j["key"].is_string() && !j["key"].get<std::string>().empty(),
        "{} line {}: missing string \"key\"", path, line);
    const std::string key = j["key"].get<std::string>();
    WINNOW_THROW_IF_NOT(j.contains("pred_probs") && j["pred_probs"].is_array(),
                        "{} line {}: key '{}' has no \"pred_probs\" array", path, line, key);
    const json& values = j["pred_probs"];
    if (!num_classes) num_classes = values.size();
    WINNOW_THROW_IF_NOT(values.size() == *num_classes,
                        "{} line {}: key '{}' has {} probabilities, expected K = {}", path, line,
                        key, values.size(), *num_classes);
    std::vector<float> row;
    double sum = 0.0;
    for (std::size_t c = 0; c < values.size(); ++c) {
      WINNOW_THROW_IF_NOT(values[c].is_number(), "{} line {}: key '{}' class {} is not a number",
                          path, line, key, c);
      const double v = values[c].get<double>();
      WINNOW_THROW_IF_NOT(std::isfinite(v) && v >= 0.0,
                          "{} line {}: key '{}' class {} is {}, not a finite probability >= 0",
                          path, line, key, c, v);
      row.push_back(static_cast<float>(v));
      sum += v;
    }
    WINNOW_THROW_IF_NOT(std::abs(sum - 1.0) <= sum_tolerance,
                        "{} line {}: key '{}' probabilities sum to {}, not 1 (within {})", path,
                        line, key, sum, sum_tolerance);
    auto [it, fresh] = file.line_of_key.emplace(key, line);
    WINNOW_THROW_IF_NOT(fresh, "{} line {}: key '{}' already had a row on line {}", path, line, key,
                        it->second);
    file.table.rows.emplace(key, std::move(row));
  }
  WINNOW_THROW_IF_NOT(num_classes && *num_classes >= 2,
                      "pred-probs file '{}' has no rows with at least 2 classes", path);
  if (file.table.class_names.empty()) {
    for (std::size_t c = 0; c < *num_classes; ++c)
      file.table.class_names.push_back(std::to_string(c));
  }
  return file;
}

}  // namespace winnow::curation::readers
