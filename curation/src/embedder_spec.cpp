#include "winnow/curation/embedder_spec.h"

#include "winnow/error.h"

namespace winnow::curation {

EmbedderSpec::EmbedderSpec(const std::string& spec) : spec_(spec) {
  std::string s;
  for (const char c : spec) {
    if (c != ' ' && c != '\t') s.push_back(c);
  }
  const auto open = s.find('(');
  if (open == std::string::npos) {
    name_ = s;
    WINNOW_THROW_IF_NOT(!name_.empty(), "embedder spec '{}' is empty", spec);
    return;
  }
  WINNOW_THROW_IF_NOT(s.back() == ')', "embedder spec '{}' has no closing ')'", spec);
  name_ = s.substr(0, open);
  const std::string body = s.substr(open + 1, s.size() - open - 2);
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t end = body.find(',', pos);
    if (end == std::string::npos) end = body.size();
    const std::string item = body.substr(pos, end - pos);
    const auto eq = item.find('=');
    WINNOW_THROW_IF_NOT(eq != std::string::npos && eq > 0 && eq + 1 < item.size(),
                        "embedder spec '{}': '{}' is not key=value", spec, item);
    const std::string key = item.substr(0, eq);
    WINNOW_THROW_IF_NOT(params_.count(key) == 0, "embedder spec '{}': '{}' given twice", spec,
                        key);
    params_[key] = item.substr(eq + 1);
    pos = end + 1;
  }
}

std::size_t EmbedderSpec::take_size(const std::string& key, std::size_t fallback) {
  const auto it = params_.find(key);
  if (it == params_.end()) return fallback;
  const std::string value = it->second;
  WINNOW_THROW_IF_NOT(value.find_first_not_of("0123456789") == std::string::npos &&
                          value.size() <= 9,
                      "embedder spec '{}': value of '{}' must be a non-negative integer, got '{}'",
                      spec_, key, value);
  params_.erase(it);
  return std::stoul(value);
}

std::string EmbedderSpec::take_string(const std::string& key, const std::string& fallback) {
  const auto it = params_.find(key);
  if (it == params_.end()) return fallback;
  std::string value = it->second;
  params_.erase(it);
  return value;
}

void EmbedderSpec::check_no_extra() const {
  WINNOW_THROW_IF_NOT(params_.empty(), "embedder spec '{}': unknown key '{}' for '{}'", spec_,
                      params_.begin()->first, name_);
}

}  // namespace winnow::curation
