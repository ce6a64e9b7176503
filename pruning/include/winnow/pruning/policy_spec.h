// PolicySpec: a policy named by a string, e.g. "infobatch(r=0.5,delta=0.875)".
//
// Values are numbers, or lists of numbers separated by ':' as in
// "infobatch-quantile(percentiles=20:85,keep=0.25:0.5)".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace winnow {

struct PolicySpec {
  std::string name;
  std::map<std::string, std::string> params;  // sorted, so to_string is canonical

  // Throws winnow::Error quoting `text` when it cannot be parsed.
  static PolicySpec parse(const std::string& text);
  std::string to_string() const;
};

// Reads a spec's parameters with defaults and bounds, then rejects any
// parameter nobody asked for, so a typo never silently falls back to a default.
class ParamReader {
 public:
  explicit ParamReader(const PolicySpec& spec) : spec_(spec) {}

  double number(const std::string& key, double fallback);
  std::vector<double> numbers(const std::string& key, const std::vector<double>& fallback);
  // Throws if the spec holds a parameter that was never read.
  void finish() const;

 private:
  const PolicySpec& spec_;
  std::vector<std::string> read_;
};

std::string format_number(double value);

}  // namespace winnow
