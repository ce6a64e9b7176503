// The renderer tests' fixture report (fixtures/report.json, written by
// fixtures/make_report_fixture.py) and small string helpers.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace winnow::curation::test {

// A fresh copy each call, so a test may break it.
inline nlohmann::json fixture_report() {
  std::ifstream in(WINNOW_REPORT_FIXTURE);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// The fixture's source whose name must be escaped.
inline const std::string kHostileName = "<script>alert(\"x\")</script> | Acme & \"Sons\"";

inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// The part of `text` from `start` up to the next `end` (both included).
inline std::string between(const std::string& text, const std::string& start,
                           const std::string& end) {
  const std::size_t from = text.find(start);
  REQUIRE(from != std::string::npos);
  const std::size_t to = text.find(end, from);
  REQUIRE(to != std::string::npos);
  return text.substr(from, to + end.size() - from);
}

}  // namespace winnow::curation::test
