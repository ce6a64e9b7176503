#include "winnow/store/review_record.h"

#include <array>
#include <utility>

namespace winnow::store {

namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 4> kVerdictNames = {{
    {Verdict::keep, "keep"},
    {Verdict::drop, "drop"},
    {Verdict::relabel, "relabel"},
    {Verdict::not_duplicate, "not_duplicate"},
}};

}  // namespace

std::string_view to_string(Verdict verdict) {
  for (const auto& [v, name] : kVerdictNames) {
    if (v == verdict) return name;
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (const auto& [v, known] : kVerdictNames) {
    if (known == name) return v;
  }
  return std::nullopt;
}

}  // namespace winnow::store
